import { heapStats } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import { detached, lowerValue, textValue } from '../../../domain/reports/aggregate/xml-text.ts'

// Values kept past their record (a source IP in the rollup) must not keep the chunk they were
// read from alive: JSC shares substring storage, so keepers copy with detached()
// (domain/reports/aggregate/xml-text.ts).

const CHUNKS = 20
const CHUNK_CHARS = 200_000

/** External string memory still held after keeping one short value from each of 20 chunks. */
function retainedBy(
  keep: (slice: string) => string,
  value = (c: number) => `192.0.2.${c}`,
  seventh = '192.0.2.7',
): number {
  Bun.gc(true)
  const before = heapStats().extraMemorySize
  const kept: string[] = []
  for (let c = 0; c < CHUNKS; c++) {
    const chunk = `${'x'.repeat(CHUNK_CHARS)}<v>${value(c)}</v>`
    const start = chunk.indexOf('<v>') + 3
    kept.push(keep(chunk.slice(start, chunk.indexOf('</v>', start))))
  }
  Bun.gc(true)
  const retained = heapStats().extraMemorySize - before
  expect(kept[7]).toBe(seventh)
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

  test('values read through every path come out trimmed, decoded and lower-cased as asked', () => {
    // Slices (they share their chunk: what is kept past a record is copied by its keeper,
    // tests/domain/reports/value-retention.test.ts).
    const text = (source: string, decoded: boolean) => ({ source, start: 0, end: source.length, decoded })
    expect(textValue(text('  192.0.2.7\n', false))).toBe('192.0.2.7')
    expect(lowerValue(text('Example7.COM', false))).toBe('example7.com')
    expect(textValue(text('a &amp; 7', false))).toBe('a & 7')
    // Already decoded, with a stray `&` and nothing to lower.
    expect(lowerValue(text('at&t 7', true))).toBe('at&t 7')
  })
})

describe('lower-cased values handed out again', () => {
  const text = (source: string) => ({ source, start: 0, end: source.length, decoded: false })

  test('are exact: thousands of values that share slots each come back as written', () => {
    const names = Array.from({ length: 5000 }, (_, i) => `d${i}.example`)
    for (let round = 0; round < 2; round++)
      for (const name of names) expect(lowerValue(text(`  ${name} `))).toBe(name)
    // Short values over a small alphabet: many share a slot and a length, in random order.
    let state = 7
    const random = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0
      return state % n
    }
    for (let i = 0; i < 20_000; i++) {
      const value = Array.from({ length: 1 + random(6) }, () => 'abc.'[random(4)]).join('')
      expect(lowerValue(text(value))).toBe(value)
    }
    // Same length and characters in another order; the limit's edge and past it.
    expect(lowerValue(text('fail'))).toBe('fail')
    expect(lowerValue(text('lafi'))).toBe('lafi')
    expect(lowerValue(text('a'.repeat(64)))).toBe('a'.repeat(64))
    expect(lowerValue(text('b'.repeat(65)))).toBe('b'.repeat(65))
  })

  test('keep no chunk alive', () => {
    const total = CHUNKS * CHUNK_CHARS
    const chunkText = (slice: string) => text(slice)
    expect(
      retainedBy(
        (slice) => lowerValue(chunkText(slice)),
        (c) => `kept${c}.example`,
        'kept7.example',
      ),
    ).toBeLessThan(total / 10)
  })
})
