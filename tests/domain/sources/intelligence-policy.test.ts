import { describe, expect, test } from 'bun:test'
import { type Recommendation, sourceRecommendations } from '../../../domain/sources/intelligence.ts'
import type { IntelligenceInput } from '../../../domain/sources/recommendation.ts'
import { days, google, input, source } from './intelligence-fixtures.ts'

// The domain-wide recommendations: block_spoofing, forwarding, unknown_sources, advance_policy.

const find = (list: Recommendation[], type: Recommendation['type']) => list.filter((r) => r.type === type)
const run = (fields: Partial<IntelligenceInput>) => sourceRecommendations(input(fields))

describe('block_spoofing', () => {
  const spoofed = [source('198.51.100.7', { messages: 700 }), source('198.51.100.8', { messages: 300 })]
  const withPolicy = (policy: IntelligenceInput['dmarc']['policy'], pct: number | null = null) =>
    find(run({ sources: [google(9_000), ...spoofed], dmarc: { policy, pct } }), 'block_spoofing')[0]!

  test('groups the IPs; the priority and the change follow the published policy', () => {
    const none = withPolicy('none')
    expect(none.title).toBe(
      'Block spoofing: 2 IPs sent 1,000 messages (10.0%) failing SPF, DKIM and DMARC over 30 days: likely spoofing, safe to reject',
    )
    expect([none.priority, none.change.value]).toEqual(['high', 'p=quarantine'])
    // The default fixture's history is clean: nothing stands in the way.
    expect(none.effect.description).not.toContain('Before advancing')
    const quarantine = withPolicy('quarantine')
    expect([quarantine.priority, quarantine.change]).toEqual([
      'medium',
      { kind: 'dmarc_policy', record: '_dmarc.example.com', value: 'p=reject' },
    ])
    expect(withPolicy('quarantine', 50).change.value).toBe('pct=100')
    const reject = withPolicy('reject')
    expect([reject.priority, reject.change]).toEqual(['low', { kind: 'none' }])
  })

  test('a raw SPF pass for another domain still counts, worded as failing DMARC only', () => {
    const list = run({
      sources: [google(9_000), source('198.51.100.7', { messages: 1_000, spfPass: 1_000 })],
    })
    expect(find(list, 'block_spoofing')[0]!.title).toContain('1,000 messages (10.0%) failing DMARC over')
    expect(find(list, 'block_spoofing')[0]!.evidence.unauthenticatedIps).toBe(0)
  })

  test('near misses: one DMARC pass, a PTR (status unknown), a forwarded message, a known service', () => {
    const cases = [
      source('198.51.100.7', { messages: 1_000, dmarcPass: 1 }, { status: 'suspicious' }),
      source('198.51.100.7', { messages: 1_000, ptr: 'host.isp.example' }),
      source('198.51.100.7', { messages: 1_000, forwarded: 1 }),
      source(
        '149.72.10.1',
        { messages: 1_000, ptr: 'o1.sendgrid.net' },
        { service: 'sendgrid', status: 'suspicious' },
      ),
    ]
    for (const near of cases)
      expect(find(run({ sources: [google(9_000), near] }), 'block_spoofing')).toEqual([])
    // Without the PTR, the same user-marked SendGrid IP is spoofing again.
    const noPtr = source('149.72.10.1', { messages: 1_000 }, { service: 'sendgrid', status: 'suspicious' })
    expect(find(run({ sources: [google(9_000), noPtr] }), 'block_spoofing')).toHaveLength(1)
  })
})

describe('forwarding', () => {
  const list = (dkimAligned: number, fields = {}) =>
    run({
      sources: [
        google(9_000),
        source('192.0.2.50', {
          messages: 1_000,
          dmarcPass: dkimAligned,
          dkimAligned,
          forwarded: 1_000,
          ...fields,
        }),
      ],
    })

  test('an unidentified IP with forwarding overrides; ARC noted below 90% DKIM survival', () => {
    const at899 = find(list(899), 'forwarding')[0]!
    expect(at899.id).toBe('forwarding:unidentified')
    expect(at899.title).toBe(
      'Forwarding via unidentified hosts: alignment breaks at unidentified hosts, DKIM survives on 89.9% of 1,000 messages',
    )
    expect([at899.priority, at899.effect.messages, at899.evidence.arcRelevant]).toEqual(['medium', 101, true])
    expect(at899.effect.description).toContain('ARC seal (RFC 8617)')
    expect(at899.change).toEqual({ kind: 'none' })
    const at900 = find(list(900), 'forwarding')[0]!
    expect([at900.priority, at900.evidence.arcRelevant]).toEqual(['low', false])
    expect(at900.effect.description).not.toContain('RFC 8617')
  })

  test('no forwarder service, status or override: no forwarding recommendation', () => {
    expect(find(list(0, { forwarded: 0 }), 'forwarding')).toEqual([])
    const marked = run({
      sources: [google(9_000), source('192.0.2.50', { messages: 10 }, { status: 'forwarder' })],
    })
    expect(find(marked, 'forwarding').map((r) => r.id)).toEqual(['forwarding:unidentified'])
  })
})

describe('unknown_sources', () => {
  const withUnknown = (unknown: number) =>
    run({
      sources: [
        google(10_000 - unknown),
        source('203.0.113.50', { messages: unknown, ptr: 'mx.partner.example' }),
      ],
    })

  test('fires above 1% of the volume, medium above 5%', () => {
    expect(find(withUnknown(100), 'unknown_sources')).toEqual([])
    const just = find(withUnknown(101), 'unknown_sources')[0]!
    expect([just.priority, just.title]).toEqual([
      'low',
      'Investigate 1 unknown source: 101 messages (1.0%) over 30 days',
    ])
    expect(just.evidence.sources).toEqual([
      { ip: '203.0.113.50', messages: 101, dmarcPass: 0, ptr: 'mx.partner.example', service: null },
    ])
    expect(find(withUnknown(500), 'unknown_sources')[0]!.priority).toBe('low')
    expect(find(withUnknown(501), 'unknown_sources')[0]!.priority).toBe('medium')
  })

  test('the evidence list keeps the 20 heaviest and counts the rest', () => {
    const many = Array.from({ length: 25 }, (_, i) =>
      source(`203.0.113.${i + 1}`, { messages: 100 + i, ptr: `h${i}.isp.example` }),
    )
    const rec = find(run({ sources: [google(5_000), ...many] }), 'unknown_sources')[0]!
    const listed = rec.evidence.sources as { ip: string }[]
    expect([listed.length, rec.evidence.sourcesOmitted, rec.evidence.ipCount]).toEqual([20, 5, 25])
    expect(listed[0]!.ip).toBe('203.0.113.25')
  })
})

describe('advance_policy', () => {
  const advance = (fields: Partial<IntelligenceInput>) => find(run(fields), 'advance_policy')[0]

  test('none → quarantine at a 98% pass rate over 14 days, not at 97.9%', () => {
    const rec = advance({ daily: days(14, 1_000, 980) })!
    expect(rec.title).toBe('Policy can advance to quarantine: 98.0% aligned over 14 days (14,000 messages)')
    expect(rec.change).toEqual({ kind: 'dmarc_policy', record: '_dmarc.example.com', value: 'p=quarantine' })
    expect([rec.priority, rec.effect.messages, rec.effect.share]).toEqual(['medium', 280, 0.02])
    expect(
      advance({ daily: [...days(13, 1_000, 980), ...days(1, 1_000, 979, '2026-11-25')] }),
    ).toBeUndefined()
  })

  test('quarantine → reject; pct below 100 is raised first; nothing past reject', () => {
    expect(advance({ dmarc: { policy: 'quarantine', pct: null } })!.title).toBe(
      'Policy can advance to reject: 99.5% aligned over 14 days (14,000 messages)',
    )
    const pct = advance({ dmarc: { policy: 'quarantine', pct: 50 } })!
    expect(pct.title).toBe(
      'Policy can apply to all mail (pct 50 → 100) at p=quarantine: 99.5% aligned over 14 days (14,000 messages)',
    )
    expect(pct.change.value).toBe('pct=100')
    expect(advance({ dmarc: { policy: 'none', pct: 50 } })!.change.value).toBe('p=quarantine; pct=100')
    expect(advance({ dmarc: { policy: 'reject', pct: null } })).toBeUndefined()
    expect(advance({ dmarc: { policy: 'reject', pct: 100 } })).toBeUndefined()
  })

  test('a missing record: publish p=none, whatever the figures', () => {
    const rec = advance({ dmarc: { policy: 'missing', pct: null }, daily: [] })!
    expect(rec.change.value).toBe('v=DMARC1; p=none')
    expect(rec.effect.messages).toBe(0)
  })

  test('a failing legitimate source or too little volume blocks it', () => {
    const failing = source(
      '149.72.10.1',
      { messages: 1_000, dmarcPass: 979, ptr: 'o1.sendgrid.net' },
      { service: 'sendgrid' },
    )
    expect(advance({ sources: [google(100_000), failing] })).toBeUndefined()
    expect(advance({ daily: days(14, 7, 7) })).toBeUndefined()
  })
})
