import { describe, expect, test } from 'bun:test'
import type { AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import { createRollupAccumulator, MAX_EVIDENCE_DOMAINS } from '../../../domain/reports/report-rollup.ts'
import { aggregateRecord } from '../../support/aggregate-records.ts'

const record = (sourceIp: string, overrides: Partial<AggregateRecord> = {}): AggregateRecord =>
  aggregateRecord(sourceIp, {
    dkimEvaluated: 'pass',
    spfEvaluated: 'pass',
    dkim: [{ domain: 'example.com', selector: 's1', result: 'pass', humanResult: null }],
    spf: [{ domain: 'example.com', scope: 'mfrom', result: 'pass' }],
    ...overrides,
  })
const aligned = { dkimAligned: true, spfAligned: true, dmarcPass: true }

describe('createRollupAccumulator', () => {
  test('sources sharing one evidence domain each keep their own list as it grows', () => {
    const rollup = createRollupAccumulator()
    rollup.add(record('192.0.2.1', { count: 3 }), aligned)
    rollup.add(record('192.0.2.2'), aligned)
    // The second source then shows another signing domain; the first must not see it.
    rollup.add(
      record('192.0.2.2', {
        count: 2,
        dkim: [{ domain: 'ESP.example.', selector: 'k', result: 'pass', humanResult: null }],
      }),
      aligned,
    )
    const sources = [...rollup.sources()]
    expect(sources).toHaveLength(2)
    // Both show only example.com for SPF: one shared list, not a list each.
    expect(sources[0]!.spfDomains).toBe(sources[1]!.spfDomains)
    expect(sources[0]).toMatchObject({ sourceIp: '192.0.2.1', messages: 3, dkimDomains: ['example.com'] })
    expect(sources[1]).toMatchObject({
      sourceIp: '192.0.2.2',
      messages: 3,
      dkimPass: 3,
      dkimDomains: ['example.com', 'esp.example'],
      spfDomains: ['example.com'],
    })
  })

  test('evidence stops at the limit, and repeats are kept once', () => {
    const rollup = createRollupAccumulator()
    for (let i = 0; i < 12; i++)
      rollup.add(
        record('192.0.2.9', {
          spf: [{ domain: `d${i % 10}.example`, scope: 'mfrom', result: 'fail' }],
        }),
        aligned,
      )
    const [source] = [...rollup.sources()]
    expect(source!.spfDomains).toHaveLength(MAX_EVIDENCE_DOMAINS)
    expect(new Set(source!.spfDomains).size).toBe(MAX_EVIDENCE_DOMAINS)
    expect(source!.spfPass).toBe(0)
  })

  test('rows are per (IP, disposition, alignment); unknown dispositions are kept and counted as other', () => {
    const rollup = createRollupAccumulator()
    const failing = { dkimAligned: false, spfAligned: false, dmarcPass: false }
    rollup.add(record('192.0.2.1', { disposition: 'none', count: 2 }), aligned)
    rollup.add(record('192.0.2.1', { disposition: 'reject', count: 5 }), failing)
    rollup.add(record('192.0.2.1', { disposition: 'none', count: 1 }), aligned)
    rollup.add(record('192.0.2.1', { disposition: 'unused', count: 4 }), failing)
    expect([...rollup.sources()].map((s) => [s.disposition, s.dkimAligned, s.messages])).toEqual([
      ['none', true, 3],
      ['reject', false, 5],
      ['unused', false, 4],
    ])
    expect(rollup.totals()).toMatchObject({
      records: 4,
      messages: 12,
      dmarcPass: 3,
      dispositionNone: 3,
      dispositionReject: 5,
      dispositionOther: 4,
    })
  })

  test("RFC 9990's disposition `pass` (no policy applied) counts as none, as in normalizeDisposition", () => {
    // The RFC 9990 sample (parsedmarc rfc9990-sample.xml, stalwart 001/004) reports `pass`;
    // parsedmarc reads it as `none` too. It used to land in "other".
    const rollup = createRollupAccumulator()
    rollup.add(record('192.0.2.1', { disposition: 'pass', count: 123 }), aligned)
    rollup.add(record('192.0.2.2', { disposition: 'none', count: 1 }), aligned)
    expect(rollup.totals()).toMatchObject({ messages: 124, dispositionNone: 124, dispositionOther: 0 })
  })
})
