import { describe, expect, test } from 'bun:test'
import { formatCount, formatPercent } from '../../../domain/sources/figures.ts'
import { nextPolicyStep, policyReadiness } from '../../../domain/sources/policy-readiness.ts'
import { days, google, source } from './intelligence-fixtures.ts'

describe('nextPolicyStep', () => {
  test('missing → none → quarantine → reject, pct raised to 100 first where it applies', () => {
    expect(nextPolicyStep('missing', null)).toEqual({ policy: 'none', pct: 100 })
    expect(nextPolicyStep('none', null)).toEqual({ policy: 'quarantine', pct: 100 })
    // pct does nothing at p=none, so it does not hold the step back.
    expect(nextPolicyStep('none', 20)).toEqual({ policy: 'quarantine', pct: 100 })
    expect(nextPolicyStep('quarantine', 25)).toEqual({ policy: 'quarantine', pct: 100 })
    expect(nextPolicyStep('quarantine', 100)).toEqual({ policy: 'reject', pct: 100 })
    expect(nextPolicyStep('reject', 99)).toEqual({ policy: 'reject', pct: 100 })
    expect(nextPolicyStep('reject', null)).toBeNull()
  })
})

describe('policyReadiness', () => {
  const clean = [google(10_000)]

  test('ready: 14 days, at least 100 messages, at least 98% passing', () => {
    expect(policyReadiness(days(14, 50, 49), clean, 'none')).toEqual({
      ready: true,
      next: { policy: 'quarantine', pct: 100 },
      passRate: 0.98,
      messages: 700,
      dmarcPass: 686,
      days: 14,
      blockers: [],
    })
  })

  test('each figure below its threshold is a blocker, in a fixed order', () => {
    const daily = days(10, 9, 8)
    expect(policyReadiness(daily, clean, 'quarantine').blockers).toEqual([
      'only 10 of the last 14 days have report data',
      '90 messages over 14 days, below the minimum of 100',
      'DMARC pass rate 88.8% over 14 days, below 98.0%',
    ])
    // The edges: 100 messages and 98% exactly pass; 99 messages or 97.9% do not.
    const edge = (messages: number, dmarcPass: number) =>
      policyReadiness([...days(13, 0, 0), { day: '2026-11-25', messages, dmarcPass }], clean, 'none').blockers
    expect(edge(100, 98)).toEqual([])
    expect(edge(99, 99)).toEqual(['99 messages over 14 days, below the minimum of 100'])
    expect(edge(1_000, 979)).toEqual(['DMARC pass rate 97.9% over 14 days, below 98.0%'])
  })

  test('only the 14 days ending on the latest day count; a day listed twice is summed', () => {
    const old = { day: '2026-11-10', messages: 100_000, dmarcPass: 0 }
    const result = policyReadiness(
      [old, ...days(14, 100, 100), { day: '2026-11-24', messages: 100, dmarcPass: 0 }],
      clean,
      'none',
    )
    expect([result.days, result.messages, result.dmarcPass]).toEqual([14, 1_500, 1_400])
    expect(result.blockers).toEqual(['DMARC pass rate 93.3% over 14 days, below 98.0%'])
  })

  test('a legitimate source below 98% blocks; at 98% it does not', () => {
    const sendgrid = (dmarcPass: number) =>
      source('149.72.10.1', { messages: 1_000, dmarcPass, ptr: 'o1.sendgrid.net' }, { service: 'sendgrid' })
    expect(policyReadiness(days(14, 100, 100), [...clean, sendgrid(979)], 'none').blockers).toEqual([
      'legitimate source SendGrid 149.72.10.1 passes DMARC on 97.9% of 1,000 messages',
    ])
    expect(policyReadiness(days(14, 100, 100), [...clean, sendgrid(980)], 'none').ready).toBe(true)
  })

  test('an unknown source above 1% of the volume failing DMARC blocks; suspicious and forwarders never do', () => {
    const stranger = (messages: number, dmarcPass = 0) =>
      source('203.0.113.50', { messages, dmarcPass, ptr: 'mx.partner.example' })
    const run = (...extra: ReturnType<typeof source>[]) =>
      policyReadiness(days(14, 100, 100), [google(9_000), ...extra], 'none').blockers
    expect(run(stranger(1_000))).toEqual([
      'unidentified source 203.0.113.50 (10.0% of the volume) passes DMARC on 0.0%: mark it legitimate or unwanted',
    ])
    expect(run(stranger(1_000, 980))).toEqual([])
    // A known service nobody has confirmed (no aligned pass yet) is named as such.
    const sendgrid = source('149.72.10.1', { messages: 1_000 }, { service: 'sendgrid' })
    expect(sendgrid.status).toBe('unknown')
    expect(run(sendgrid)).toEqual([
      'unconfirmed source SendGrid 149.72.10.1 (10.0% of the volume) passes DMARC on 0.0%: mark it legitimate or unwanted',
    ])
    // 91 of 9,091 is 1.0009%: just over the line; 90 of 9,090 is 0.99%.
    expect(run(stranger(91))).toHaveLength(1)
    expect(run(stranger(90))).toEqual([])
    expect(run(source('198.51.100.7', { messages: 50_000 }))).toEqual([])
    expect(run(source('209.85.220.69', { messages: 5_000 }, { service: 'google_groups' }))).toEqual([])
  })

  test('already p=reject: no step, nothing to block; missing: p=none is always safe', () => {
    expect(policyReadiness(days(14, 1, 0), clean, 'reject')).toMatchObject({
      ready: false,
      next: null,
      blockers: [],
    })
    expect(policyReadiness([], [], 'missing')).toEqual({
      ready: true,
      next: { policy: 'none', pct: 100 },
      passRate: null,
      messages: 0,
      dmarcPass: 0,
      days: 0,
      blockers: [],
    })
  })

  test('a malformed day is a caller error', () => {
    expect(() => policyReadiness([{ day: '24/11/2026', messages: 1, dmarcPass: 1 }], [], 'none')).toThrow(
      'daily[0].day "24/11/2026" is not YYYY-MM-DD',
    )
  })
})

describe('figures', () => {
  test('counts take thousands separators whatever the locale', () => {
    expect([0, 7, 999, 1_000, 12_345, 1_234_567, -4_500].map(formatCount)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '12,345',
      '1,234,567',
      '-4,500',
    ])
  })

  test('percentages have one decimal, truncated; tiny shares are <0.1%', () => {
    expect(formatPercent(993, 1_000)).toBe('99.3%')
    expect(formatPercent(9_799, 10_000)).toBe('97.9%')
    expect(formatPercent(2, 3)).toBe('66.6%')
    expect(formatPercent(1, 1)).toBe('100.0%')
    expect(formatPercent(1, 10_000)).toBe('<0.1%')
    expect(formatPercent(0, 5)).toBe('0.0%')
    expect(formatPercent(5, 0)).toBe('0.0%')
    expect(formatPercent(123_456, 1)).toBe('12,345,600.0%')
  })
})
