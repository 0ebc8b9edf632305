import { heapStats } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import { detached } from '../../../domain/reports/aggregate/xml-text.ts'

// Values kept past their record (a source IP in the rollup) must not keep the chunk they were
// read from alive: JSC shares substring storage (domain/reports/aggregate/xml-text.ts).

const CHUNKS = 20
const CHUNK_CHARS = 200_000

/** External string memory still held after keeping one short value from each of 20 chunks. */
function retainedBy(keep: (slice: string) => string): number {
  Bun.gc(true)
  const before = heapStats().extraMemorySize
  const kept: string[] = []
  for (let c = 0; c < CHUNKS; c++) {
    const chunk = `${'x'.repeat(CHUNK_CHARS)}<source_ip>192.0.2.${c}</source_ip>`
    const start = chunk.indexOf('192.')
    kept.push(keep(chunk.slice(start, chunk.indexOf('<', start))))
  }
  Bun.gc(true)
  const retained = heapStats().extraMemorySize - before
  expect(kept[7]).toBe('192.0.2.7')
  return retained
}

describe('detached', () => {
  test('returns the same text for every kind of value', () => {
    for (const value of [
      '192.0.2.1',
      '2001:db8::1',
      'example.com',
      'Ünïcode.example',
      '\u00a0x',
      '😀 y',
      'a',
    ])
      expect(detached(value)).toBe(value)
    expect(detached('')).toBe('')
    // A lone surrogate survives the JSON round trip.
    expect(detached('\ud800x')).toBe('\ud800x')
  })

  test('keeps no chunk alive (a plain slice does: the control)', () => {
    const total = CHUNKS * CHUNK_CHARS
    expect(retainedBy((slice) => slice)).toBeGreaterThan(total / 2)
    expect(retainedBy(detached)).toBeLessThan(total / 10)
    expect(retainedBy((slice) => detached(`é${slice}`).slice(1))).toBeLessThan(total / 10)
  })
})
