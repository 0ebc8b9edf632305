import { describe, expect, test } from 'bun:test'
import { fetchSpfRecord } from '../../../domain/spf/fetch-record.ts'
import { parseSpfRecord } from '../../../domain/spf/record.ts'
import { createRecordCache, recordCost } from '../../../domain/spf/record-cache.ts'
import { memoryDns, txt } from '../../support/memory-dns.ts'

const record = (i: number) => `v=spf1 ip4:192.0.2.${i} include:_spf${i}.example.com -all`

describe('the parsed-record cache (domain/spf/record-cache.ts)', () => {
  test('the same text is parsed once and gives the same, frozen record', () => {
    const cache = createRecordCache({ maxEntries: 10, maxBytes: 1 << 20 })
    const first = cache.parse(record(1))
    const again = cache.parse(record(1))
    expect(again).toBe(first)
    expect(first).toEqual(parseSpfRecord(record(1)))
    if (!first.ok) throw new Error('expected a record')
    expect(Object.isFrozen(first.record.directives[1]!.mechanism)).toBe(true)
    expect(() => {
      ;(first.record.directives as unknown[]).push(null)
    }).toThrow()
  })

  test('keyed by the exact text: case and spacing make other entries', () => {
    const cache = createRecordCache({ maxEntries: 10, maxBytes: 1 << 20 })
    const a = cache.parse('v=spf1 a -all')
    expect(cache.parse('V=SPF1 A -ALL')).not.toBe(a)
    expect(cache.parse('v=spf1  a -all')).not.toBe(a)
    expect(cache.size).toBe(3)
  })

  test('syntax errors are cached too', () => {
    const cache = createRecordCache({ maxEntries: 10, maxBytes: 1 << 20 })
    const bad = cache.parse('v=spf1 a:bad..example.com/99 -all')
    expect(bad.ok).toBe(false)
    expect(cache.parse('v=spf1 a:bad..example.com/99 -all')).toBe(bad)
  })

  test('bounded in entries, least recently used out first', () => {
    const cache = createRecordCache({ maxEntries: 3, maxBytes: 1 << 20 })
    const kept = cache.parse(record(0))
    const evicted = cache.parse(record(1))
    const second = cache.parse(record(2))
    expect(cache.parse(record(0))).toBe(kept) // used again: now the most recent
    cache.parse(record(3)) // evicts record(1), the least recently used
    expect(cache.size).toBe(3)
    expect(cache.parse(record(0))).toBe(kept)
    expect(cache.parse(record(2))).toBe(second)
    expect(cache.parse(record(1))).not.toBe(evicted) // parsed again (and record(3) goes)
    expect(cache.size).toBe(3)
  })

  test('bounded in estimated bytes; a record over an eighth of the budget is not kept', () => {
    const cost = recordCost(record(10), parseSpfRecord(record(10)))
    const cache = createRecordCache({ maxEntries: 1000, maxBytes: cost * 9 })
    for (let i = 10; i < 60; i++) cache.parse(record(i))
    expect(cache.bytes).toBeLessThanOrEqual(cost * 9)
    expect(cache.size).toBe(9)
    const huge = `v=spf1 ${'ip4:192.0.2.1 '.repeat(50)}-all`
    const parsed = cache.parse(huge)
    expect(parsed.ok).toBe(true)
    expect(cache.parse(huge)).not.toBe(parsed)
    expect(cache.size).toBe(9)
  })

  test('fetchSpfRecord hands out the shared record for the same text', async () => {
    const dns = memoryDns({
      'a.example.com': [txt('v=spf1 include:_spf.example.net -all')],
      'b.example.com': [txt('v=spf1 include:_spf.example.net', ' -all')],
    })
    const a = await fetchSpfRecord(dns, 'a.example.com')
    const b = await fetchSpfRecord(dns, 'b.example.com')
    expect(a.ok && b.ok && a.record === b.record).toBe(true)
  })
})
