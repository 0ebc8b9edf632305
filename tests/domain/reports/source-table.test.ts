import { heapStats } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import type { AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import {
  createSourceTable,
  MAX_EVIDENCE_DOMAINS,
  type SourceRollup,
} from '../../../domain/reports/source-table.ts'
import type { RecordOutcome } from '../../../domain/reports/store-aggregate.ts'
import { aggregateRecord } from '../../support/aggregate-records.ts'

// The table keeps its rows in typed arrays and finds canonical IPv4 sources in a hash table of
// their numbers: checked here against a plain Map keyed by strings, past every growth point.

function reference(input: [AggregateRecord, RecordOutcome][]): SourceRollup[] {
  const rows = new Map<string, SourceRollup>()
  for (const [record, outcome] of input) {
    const key = JSON.stringify([record.sourceIp, record.disposition, outcome.dkimAligned, outcome.spfAligned])
    let row = rows.get(key)
    if (row === undefined) {
      row = {
        sourceIp: record.sourceIp,
        disposition: record.disposition,
        dkimAligned: outcome.dkimAligned,
        spfAligned: outcome.spfAligned,
        messages: 0,
        spfPass: 0,
        dkimPass: 0,
        forwarded: 0,
        dkimDomains: [],
        spfDomains: [],
      }
      rows.set(key, row)
    }
    const add = (list: readonly string[], domain: string) => {
      const name = domain.trim().toLowerCase().replace(/\.$/, '')
      if (name === '' || /\s/.test(name) || list.length >= MAX_EVIDENCE_DOMAINS || list.includes(name))
        return list
      return [...list, name]
    }
    row.messages += record.count
    const passing = record.dkim.filter((s) => s.result === 'pass')
    for (const s of passing) row.dkimDomains = add(row.dkimDomains, s.domain)
    if (passing.length > 0) row.dkimPass += record.count
    for (const c of record.spf) row.spfDomains = add(row.spfDomains, c.domain)
    if (record.spf.some((c) => c.result === 'pass')) row.spfPass += record.count
    if (record.reasons.some((r) => r.type === 'forwarded')) row.forwarded += record.count
  }
  return [...rows.values()]
}

describe('createSourceTable', () => {
  test('matches a plain Map past the initial capacity, with IPv6, odd IPv4 texts and several rows per IP', () => {
    const oddIps = [
      '2001:db8::1',
      '2001:DB8::1',
      '010.1.2.3',
      '10.1.2.3',
      '::ffff:10.1.2.3',
      '0.0.0.0',
      '255.255.255.255',
      '128.0.0.1',
      'not an ip',
    ]
    const input: [AggregateRecord, RecordOutcome][] = []
    // 5,000 addresses over 12,000 records: the rows grow past 1,024 and the hash table rehashes
    // several times, with IPs coming back after each growth.
    for (let k = 0; k < 12_000; k++) {
      const n = (k * 7919) % 5_000
      const ip = k % 97 === 0 ? oddIps[k % oddIps.length]! : `198.${n >> 8}.${n & 255}.${k % 3}`
      const record = aggregateRecord(ip, {
        count: 1 + (k % 50),
        disposition: ['none', 'quarantine', 'reject', 'pass', 'unused'][k % 5]!,
        dkim: [
          {
            domain: `Signer${k % 13}.example.`,
            selector: 's',
            result: k % 4 ? 'pass' : 'fail',
            humanResult: null,
          },
        ],
        spf: [
          { domain: `bounces${k % 11}.example`, scope: 'mfrom', result: k % 3 ? 'pass' : 'softfail' },
          { domain: ' ', scope: 'mfrom', result: 'none' },
        ],
        reasons: k % 10 === 0 ? [{ type: 'forwarded', comment: null }] : [],
      })
      input.push([record, { dkimAligned: k % 2 === 0, spfAligned: k % 7 === 0, dmarcPass: k % 2 === 0 }])
    }
    const table = createSourceTable()
    for (const [record, outcome] of input) table.add(record, outcome)
    const rows = [...table.rows()]
    const expected = reference(input)
    expect(rows.length).toBeGreaterThan(2_048)
    expect(rows).toEqual(expected)
    // Different texts of the same address stay different sources, as reported.
    for (const ip of oddIps) expect(rows.some((row) => row.sourceIp === ip)).toBe(true)
  })

  test('evidence stops at the limit', () => {
    const table = createSourceTable()
    for (let k = 0; k < 20; k++)
      table.add(
        aggregateRecord('192.0.2.1', {
          dkim: [{ domain: `d${k}.example`, selector: 's', result: 'pass', humanResult: null }],
        }),
        { dkimAligned: true, spfAligned: false, dmarcPass: true },
      )
    const [row] = [...table.rows()]
    expect(row!.dkimDomains).toEqual(Array.from({ length: MAX_EVIDENCE_DOMAINS }, (_, k) => `d${k}.example`))
    expect(row!.dkimPass).toBe(20)
  })

  test('sums beyond 2^31 stay exact', () => {
    const table = createSourceTable()
    const count = 999_999_999_999
    for (let k = 0; k < 3; k++)
      table.add(aggregateRecord('192.0.2.1', { count }), {
        dkimAligned: false,
        spfAligned: false,
        dmarcPass: false,
      })
    expect([...table.rows()][0]!.messages).toBe(3 * count)
  })

  // Evidence lists are kept by number in a list of lists that only grows: what it keeps must be
  // bounded by the rows (as with the arrays per row before), not by the domains a report repeats.
  test('evidence lists kept stay bounded by the rows, not by the DKIM/SPF entries', () => {
    const outcome = { dkimAligned: true, spfAligned: false, dmarcPass: true }
    const pass = (domain: string) => ({ domain, selector: 's', result: 'pass', humanResult: null })
    const arrays = () => {
      Bun.gc(true)
      return heapStats().objectTypeCounts.Array ?? 0
    }
    // One source shown 30,000 different domains (past the 10,000-name caches): one row.
    let table = createSourceTable()
    let before = arrays()
    for (let k = 0; k < 30_000; k++)
      table.add(aggregateRecord('192.0.2.1', { dkim: [pass(`d${k}.example`)] }), outcome)
    expect(arrays() - before).toBeLessThan(1_000)
    expect([...table.rows()]).toHaveLength(1)
    // 5,000 sources shown the same eight domains, one per record: one list of eight per row.
    table = createSourceTable()
    before = arrays()
    for (let k = 0; k < 5_000; k++)
      for (let j = 0; j < MAX_EVIDENCE_DOMAINS; j++)
        table.add(aggregateRecord(`10.0.${k >> 8}.${k & 255}`, { dkim: [pass(`s${j}.example`)] }), outcome)
    expect(arrays() - before).toBeLessThan(2 * 5_000)
    const rows = [...table.rows()]
    expect(rows).toHaveLength(5_000)
    expect(rows[4_999]!.dkimDomains).toHaveLength(MAX_EVIDENCE_DOMAINS)
  })
})
