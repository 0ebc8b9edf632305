import { heapStats } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import { detached, lowerValue, textValue } from '../../../domain/reports/aggregate/xml-text.ts'

// Values kept past their record (a source IP in the rollup) must not keep the chunk they were
// read from alive: JSC shares substring storage (domain/reports/aggregate/xml-text.ts).

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

  test("values read through the tokenizer's paths keep no chunk alive either", () => {
    const total = CHUNKS * CHUNK_CHARS
    const text = (slice: string, decoded: boolean) => ({
      source: slice,
      start: 0,
      end: slice.length,
      decoded,
    })
    // Plain, lower-cased, with references, and an already decoded value with a stray `&` and
    // nothing to lower (toLowerCase() then returns its input).
    expect(retainedBy((slice) => textValue(text(slice, false)))).toBeLessThan(total / 10)
    expect(
      retainedBy(
        (slice) => lowerValue(text(slice, false)),
        (c) => `Example${c}.COM`,
        'example7.com',
      ),
    ).toBeLessThan(total / 10)
    expect(
      retainedBy(
        (slice) => textValue(text(slice, false)),
        (c) => `a &amp; ${c}`,
        'a & 7',
      ),
    ).toBeLessThan(total / 10)
    expect(
      retainedBy(
        (slice) => lowerValue(text(slice, true)),
        (c) => `at&t ${c}`,
        'at&t 7',
      ),
    ).toBeLessThan(total / 10)
  })
})
