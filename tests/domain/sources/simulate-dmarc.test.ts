import { describe, expect, test } from 'bun:test'
import type { Result } from '../../../domain/shared/result.ts'
import { simulateDmarcPolicy } from '../../../domain/sources/simulate-dmarc.ts'
import type { SourceStats } from '../../../domain/sources/source-stats.ts'

// No DNS here: the DMARC policy simulation only re-applies dispositions to reported volume.
const stats = (ip: string, fields: Partial<SourceStats> = {}): SourceStats => ({
  ip,
  messages: 100,
  dmarcPass: 100,
  dkimAligned: 0,
  spfAligned: 100,
  dkimPass: 0,
  spfPass: 100,
  forwarded: 0,
  quarantined: 0,
  rejected: 0,
  firstSeen: '2026-01-01',
  lastSeen: '2026-01-07',
  ptr: null,
  dkimDomains: [],
  spfDomains: ['example.test'],
  ...fields,
})

function expectInvalid(result: Result<unknown>, field: string) {
  expect(result.ok).toBe(false)
  if (result.ok) return
  expect(result.failure.code).toBe('validation_failed')
  if (result.failure.code === 'validation_failed') expect(Object.keys(result.failure.errors)).toEqual([field])
}

describe('simulateDmarcPolicy', () => {
  const dmarc = (proposedRecord: string, sources: SourceStats[]) => {
    const result = simulateDmarcPolicy({ proposedRecord, sources })
    if (!result.ok) throw new Error(`unexpected failure: ${JSON.stringify(result.failure)}`)
    return result.value
  }
  const failing = (ip: string, messages: number, fields: Partial<SourceStats> = {}) =>
    stats(ip, { messages, dmarcPass: 0, spfAligned: 0, spfPass: 0, spfDomains: [], ...fields })

  test('p=reject with pct=50 rejects half the failing mail and quarantines the rest (RFC 7489 §6.6.4)', () => {
    const sim = dmarc('v=DMARC1; p=reject; pct=50; rua=mailto:d@example.test', [
      failing('203.0.113.1', 100),
      failing('203.0.113.2', 3),
      stats('192.0.2.10', { messages: 40, dmarcPass: 40 }),
    ])
    expect(sim).toMatchObject({ policy: 'reject', pct: 50, testing: false })
    expect(sim.disposition).toEqual({ sampled: 'reject', rest: 'quarantine' })
    expect(sim.sources.map((s) => [s.ip, s.failing, s.proposed])).toEqual([
      ['203.0.113.1', 100, { quarantined: 50, rejected: 50 }],
      ['203.0.113.2', 3, { quarantined: 1, rejected: 2 }],
      ['192.0.2.10', 0, { quarantined: 0, rejected: 0 }],
    ])
    expect(sim.totals).toMatchObject({
      messages: 143,
      failing: 103,
      proposed: { quarantined: 51, rejected: 52 },
    })
    expect(sim.findings.map((f) => f.code)).toContain('pct_historic')

    const quarantine = dmarc('v=DMARC1; p=quarantine; pct=50', [failing('203.0.113.1', 100)])
    expect(quarantine.disposition).toEqual({ sampled: 'quarantine', rest: 'none' })
    expect(quarantine.totals.proposed).toEqual({ quarantined: 50, rejected: 0 })
  })

  test('t=y (RFC 9989) is testing: nothing is enforced', () => {
    const sim = dmarc('v=DMARC1; p=reject; t=y; rua=mailto:d@example.test', [failing('203.0.113.1', 100)])
    expect(sim).toMatchObject({
      policy: 'reject',
      testing: true,
      disposition: { sampled: 'none', rest: 'none' },
    })
    expect(sim.totals.proposed).toEqual({ quarantined: 0, rejected: 0 })
  })

  test('collateral damage: failing mail from sources with some authentication or forwarding', () => {
    const sources = [
      // A newsletter tool signing with its own domain: DKIM passes, but unaligned.
      failing('198.51.100.30', 200, { dkimPass: 200, dkimDomains: ['esp.test'] }),
      // A forwarder that broke both.
      failing('192.0.2.50', 30, { forwarded: 30 }),
      // Partly aligned own server: its 10 failures are collateral too.
      stats('192.0.2.10', { messages: 100, dmarcPass: 90, spfAligned: 90, spfPass: 90 }),
      // No authentication at all.
      failing('203.0.113.66', 500, { quarantined: 100, rejected: 50 }),
      failing('203.0.113.67', 70),
    ]
    const sim = dmarc('v=DMARC1; p=reject', sources)
    expect(sim.totals.collateral).toEqual({ sources: 3, failing: 240, quarantined: 0, rejected: 240 })
    expect(sim.totals.likelySpoofing).toEqual({ sources: 2, failing: 570, quarantined: 0, rejected: 570 })
    expect(sim.totals.current).toEqual({ quarantined: 100, rejected: 50 })
    const spoofer = sim.sources.find((s) => s.ip === '203.0.113.66')!
    expect(spoofer).toMatchObject({ looksLegitimate: false, current: { quarantined: 100, rejected: 50 } })
    expect(sim.sources.map((s) => s.ip)).toEqual([
      '203.0.113.66',
      '198.51.100.30',
      '203.0.113.67',
      '192.0.2.50',
      '192.0.2.10',
    ])
  })

  test('a proposal that is not a DMARC record, or has an unusable policy, is a validation failure', () => {
    expectInvalid(simulateDmarcPolicy({ proposedRecord: 'v=spf1 -all', sources: [] }), 'record')
    expectInvalid(
      simulateDmarcPolicy({ proposedRecord: 'v=DMARC1; p=rejct; rua=mailto:d@example.test', sources: [] }),
      'record',
    )
    const noPolicy = dmarc('v=DMARC1; rua=mailto:d@example.test', [failing('203.0.113.1', 10)])
    expect(noPolicy.policy).toBe('none')
    expect(noPolicy.totals.proposed).toEqual({ quarantined: 0, rejected: 0 })
  })
})
