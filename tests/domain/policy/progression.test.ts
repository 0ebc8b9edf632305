import { describe, expect, test } from 'bun:test'
import {
  decideProgression,
  failureSpiked,
  type LastChange,
  legitimateFailure,
  MIN_DAYS_BETWEEN_STEPS,
  type ProgressionInput,
  type ProgressionSource,
} from '../../../domain/policy/progression.ts'
import { policyReadiness } from '../../../domain/sources/policy-readiness.ts'
import { days, source } from '../sources/intelligence-fixtures.ts'

// The pure progression rules (docs/policy-progression.md): when a hosted policy advances, what
// holds it back and in which words, and when a step is rolled back.

const NOW = new Date('2026-11-24T06:00:00Z')
const google = (messages: number, dmarcPass = messages, dkimAligned = dmarcPass) =>
  source(
    '74.125.0.1',
    { messages, dmarcPass, dkimAligned },
    { service: 'google_workspace', status: 'legitimate' },
  )

function input(fields: Partial<ProgressionInput> & { sources?: ProgressionSource[] } = {}): ProgressionInput {
  const sources = fields.sources ?? [google(14_000, 13_930)]
  const hosted =
    fields.hosted === undefined
      ? { policy: 'none' as const, pct: null, record: 'v=DMARC1; p=none' }
      : fields.hosted
  return {
    domain: 'example.com',
    automation: 'automatic',
    verified: true,
    hosted,
    pointed: true,
    readiness: policyReadiness(
      days(14, 1_000, 995),
      sources,
      hosted?.policy ?? 'missing',
      hosted?.pct ?? null,
    ),
    sources,
    sinceLastChange: null,
    now: NOW,
    ...fields,
  }
}

const change = (fields: Partial<LastChange> = {}): LastChange => ({
  kind: 'advance',
  from: { policy: 'none', pct: null },
  to: { policy: 'quarantine', pct: null },
  days: 3,
  failureRateBefore: 0.005,
  failureRateAfter: 0.004,
  messagesAfter: 3_000,
  ...fields,
})

describe('advance and propose', () => {
  test('automatic: a clean 14 days at 99.5% advances none → quarantine, with the figures as the reason', () => {
    const decision = decideProgression(input())
    expect(decision).toMatchObject({
      action: 'advance',
      kind: 'advance',
      from: 'none',
      to: 'quarantine',
      target: { policy: 'quarantine', pct: null },
      blockers: [],
    })
    expect(decision.reason).toBe(
      'Ready for p=quarantine: 99.5% of 14,000 messages passed DMARC over the last 14 days and no legitimate or unidentified source is failing.',
    )
  })

  test('assisted: the same step is a proposal', () => {
    expect(decideProgression(input({ automation: 'assisted' }))).toMatchObject({
      action: 'propose',
      to: 'quarantine',
    })
  })

  test('quarantine → reject, and a pct below 100 is raised first (the tag is dropped)', () => {
    const at = (pct: number | null) =>
      input({ hosted: { policy: 'quarantine', pct, record: 'v=DMARC1; p=quarantine' } })
    expect(decideProgression(at(null))).toMatchObject({
      to: 'reject',
      target: { policy: 'reject', pct: null },
    })
    const raise = decideProgression(at(50))
    expect(raise).toMatchObject({
      from: 'quarantine',
      to: 'quarantine',
      target: { policy: 'quarantine', pct: null },
    })
    expect(raise.reason).toStartWith('Ready for pct=100 at p=quarantine: ')
  })

  test('p=reject on all mail: nothing left', () => {
    const decision = decideProgression(
      input({ hosted: { policy: 'reject', pct: null, record: 'v=DMARC1; p=reject' } }),
    )
    expect(decision).toMatchObject({ action: 'hold', to: null })
    expect(decision.reason).toContain('already p=reject')
  })
})

describe('hold, with human reasons', () => {
  test('manual, unverified and unhosted domains never change', () => {
    expect(decideProgression(input({ automation: 'manual' }))).toMatchObject({ action: 'hold', blockers: [] })
    expect(decideProgression(input({ verified: false })).blockers[0]).toStartWith(
      'verify ownership of example.com',
    )
    expect(decideProgression(input({ hosted: null })).reason).toContain(
      'host the DMARC record of example.com first',
    )
    // A zone on a connected DNS provider that cannot be used says why, instead of "host it".
    const unreadable = 'the DNS provider holds no single valid DMARC record at _dmarc.example.com'
    expect(decideProgression(input({ hosted: null, unreadable }))).toMatchObject({
      action: 'hold',
      blockers: [unreadable],
      reason: `Not yet: ${unreadable}.`,
    })
  })

  test('legitimate sources failing are summed up: "2 legitimate sources still fail DKIM"', () => {
    const sources = [
      google(14_000),
      source(
        '149.72.10.20',
        { messages: 400, dmarcPass: 300, dkimAligned: 0 },
        { service: 'sendgrid', status: 'legitimate' },
      ),
      source('198.51.100.7', { messages: 200, dmarcPass: 150, dkimAligned: 100 }, { status: 'legitimate' }),
    ]
    const decision = decideProgression(input({ sources }))
    expect(decision.action).toBe('hold')
    expect(decision.reason).toBe('Not advancing to quarantine yet: 2 legitimate sources still fail DKIM.')
    // The detail stays in the blockers, one per source, word for word from readiness.
    expect(decision.blockers).toEqual([
      'legitimate source SendGrid 149.72.10.20 passes DMARC on 75.0% of 400 messages',
      'legitimate source 198.51.100.7 passes DMARC on 75.0% of 200 messages',
    ])
  })

  test('an unidentified source with significant failing volume blocks; other blockers are kept verbatim', () => {
    const sources = [google(1_000), source('203.0.113.9', { messages: 50 }, { status: 'unknown' })]
    const decision = decideProgression({
      ...input({ sources }),
      readiness: policyReadiness(days(10, 9, 9), sources, 'none'),
    })
    expect(decision.reason).toBe(
      'Not advancing to quarantine yet: only 10 of the last 14 days have report data; 90 messages over 14 days, below the minimum of 100; 1 unidentified source with 4.7% of the volume still fails DMARC.',
    )
    expect(decision.blockers).toHaveLength(3)
  })

  test('the CNAME must point at the hosted record (or a step would reach no receiver)', () => {
    expect(decideProgression(input({ pointed: false })).reason).toContain(
      '_dmarc.example.com is not a CNAME to the hosted record yet',
    )
    expect(decideProgression(input({ pointed: null })).blockers[0]).toContain('could not be checked')
  })

  test(`steps are at least ${MIN_DAYS_BETWEEN_STEPS} days apart`, () => {
    const waiting = decideProgression(
      input({
        hosted: { policy: 'quarantine', pct: null, record: 'v=DMARC1; p=quarantine' },
        sinceLastChange: change({ days: 6 }),
      }),
    )
    expect(waiting).toMatchObject({ action: 'hold', notBefore: '2026-11-25' })
    expect(waiting.blockers).toEqual([
      'the last change was 6 days ago; steps are at least 7 days apart (next on 2026-11-25)',
    ])
    const due = decideProgression(
      input({
        hosted: { policy: 'quarantine', pct: null, record: 'v=DMARC1; p=quarantine' },
        sinceLastChange: change({ days: 7 }),
      }),
    )
    expect(due).toMatchObject({ action: 'advance', to: 'reject' })
  })
})

describe('rollback', () => {
  const atQuarantine = {
    hosted: { policy: 'quarantine' as const, pct: null, record: 'v=DMARC1; p=quarantine' },
  }

  test('a spike after an advance rolls it back (automatic) or proposes to (assisted)', () => {
    const spike = change({ failureRateBefore: 0.005, failureRateAfter: 0.06, messagesAfter: 500 })
    const decision = decideProgression(input({ ...atQuarantine, sinceLastChange: spike }))
    expect(decision).toMatchObject({
      action: 'rollback',
      kind: 'rollback',
      from: 'quarantine',
      to: 'none',
      target: { policy: 'none', pct: null },
    })
    expect(decision.reason).toBe(
      'Rolled back: legitimate sources fail DMARC on 6.0% of 500 messages since the change to quarantine 3 days ago (0.5% before).',
    )
    const assisted = decideProgression(
      input({ ...atQuarantine, automation: 'assisted', sinceLastChange: spike }),
    )
    expect(assisted).toMatchObject({ action: 'propose', kind: 'rollback', to: 'none' })
  })

  test('the edges: > 2%, at least 3× before, at least 100 messages, within 30 days, advances only', () => {
    const base = change({ failureRateBefore: 0.01, failureRateAfter: 0.03, messagesAfter: 100 })
    expect(failureSpiked(base)).toBe(true)
    expect(failureSpiked({ ...base, failureRateAfter: 0.029 })).toBe(false) // < 3× 1%
    expect(failureSpiked({ ...base, failureRateBefore: 0, failureRateAfter: 0.02 })).toBe(false) // not > 2%
    expect(failureSpiked({ ...base, failureRateBefore: null, failureRateAfter: 0.021 })).toBe(true)
    expect(failureSpiked({ ...base, messagesAfter: 99 })).toBe(false)
    expect(failureSpiked({ ...base, days: 31 })).toBe(false)
    expect(failureSpiked({ ...base, kind: 'edit' })).toBe(false)
    expect(failureSpiked({ ...base, kind: 'rollback' })).toBe(false)
  })

  test('no rollback when the record was edited since the change', () => {
    const spike = change({ failureRateAfter: 0.5, messagesAfter: 500 })
    const edited = { hosted: { policy: 'reject' as const, pct: null, record: 'v=DMARC1; p=reject' } }
    expect(decideProgression(input({ ...edited, sinceLastChange: spike })).kind).not.toBe('rollback')
  })

  test('legitimateFailure counts legitimate sources only', () => {
    const sources = [
      { status: 'legitimate' as const, stats: { messages: 900, dmarcPass: 880 } },
      { status: 'legitimate' as const, stats: { messages: 100, dmarcPass: 100 } },
      { status: 'suspicious' as const, stats: { messages: 5_000, dmarcPass: 0 } },
    ]
    expect(legitimateFailure(sources)).toEqual({ rate: 0.02, messages: 1_000 })
    expect(legitimateFailure([])).toEqual({ rate: null, messages: 0 })
  })
})
