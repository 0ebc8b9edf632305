import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DOMAIN, type SourceWorld, startSourceWorld } from '../support/source-reports.ts'

// Recommendations and simulations end to end over the same world as tests/api/sources.test.ts:
// the published records come from the loopback DNS server, the figures from ingested reports.

let w: SourceWorld
const simulate = (body: unknown) =>
  w.t.request('POST', `/api/v1/domains/${DOMAIN}/simulate`, { token: w.owner.token, body })

beforeAll(async () => {
  w = await startSourceWorld()
}, 60_000)
afterAll(() => w.close())

describe('GET /domains/{domain}/sources/intelligence', () => {
  test('recommendations from the sources and the published records, with policy readiness', async () => {
    const res = await w.t.request('GET', `/api/v1/domains/${DOMAIN}/sources/intelligence?days=30`, {
      token: w.owner.token,
    })
    expect(res.status).toBe(200)
    const byId = Object.fromEntries(res.body.data.map((r: any) => [r.id, r]))
    // The spoofer: no PTR, nothing passes, p=none delivers it.
    expect(byId[`block_spoofing:${DOMAIN}`]).toMatchObject({
      type: 'block_spoofing',
      priority: 'high',
      effect: { messages: 25, share: 13.3 },
      change: { kind: 'dmarc_policy', record: `_dmarc.${DOMAIN}`, value: 'p=quarantine' },
      evidence: { ip_count: 1, messages: 25, unauthenticated_ips: 1, sources_omitted: 0 },
    })
    expect(byId[`block_spoofing:${DOMAIN}`].evidence.sources[0]).toMatchObject({
      ip: '203.0.113.9',
      dmarc_pass: 0,
    })
    // SendGrid passes through SPF only (its include is published): DKIM is what to fix.
    expect(byId['enable_dkim:sendgrid']).toMatchObject({
      change: { kind: 'dkim_enable', service: 'sendgrid' },
    })
    expect(byId['authorize_service:sendgrid']).toBeUndefined()
    expect(byId['authorize_service:google_workspace']).toBeUndefined()
    // The forwarder with a forwarding override, and the partner's unexplained volume.
    expect(byId['forwarding:unidentified']).toMatchObject({ type: 'forwarding' })
    expect(byId[`unknown_sources:${DOMAIN}`]).toMatchObject({ effect: { messages: 10 } })
    expect(res.body.data[0].priority).toBe('high')
    // Two days of reports: too little history to advance from p=none.
    expect(res.body.meta.readiness).toMatchObject({
      ready: false,
      next: { policy: 'quarantine', pct: 100 },
      messages: 188,
      dmarc_pass: 148,
      pass_rate: 78.72,
    })
    expect(res.body.meta.readiness.days).toBeGreaterThanOrEqual(2)
    expect(res.body.meta.readiness.blockers[0]).toContain('of the last 14 days have report data')
    expect(res.body.meta).toMatchObject({ total: res.body.data.length, page: 1, per_page: 25 })
  })

  test('pages and periods are validated like the other lists', async () => {
    const page = await w.t.request(
      'GET',
      `/api/v1/domains/${DOMAIN}/sources/intelligence?per_page=1&page=2`,
      {
        token: w.owner.token,
      },
    )
    expect(page.body.data).toHaveLength(1)
    expect(page.body.meta.last_page).toBe(page.body.meta.total)
    const bad = await w.t.request('GET', `/api/v1/domains/${DOMAIN}/sources/intelligence?days=120`, {
      token: w.owner.token,
    })
    expect(bad.status).toBe(400)
    expect(Object.keys(bad.body.errors)).toEqual(['days'])
  })
})

describe('POST /domains/{domain}/simulate', () => {
  test('dropping an include makes the source that relied on it newly fail', async () => {
    const res = await simulate({ spf_record: 'v=spf1 include:_spf.google.com ~all', days: 30 })
    expect(res.status).toBe(200)
    const spf = res.body.data.spf
    expect(res.body.data.dmarc).toBeUndefined()
    expect(res.body.data.period.to).toBe(w.t.clock.now.toISOString().slice(0, 10))
    expect(spf).toMatchObject({
      domain: DOMAIN,
      proposed_record: 'v=spf1 include:_spf.google.com ~all',
      lookups: 1,
      lookup_limit: 10,
      record_problems: [],
      truncated: false,
      total_sources: 5,
      skipped_messages: 0,
    })
    expect(spf.newly_failing).toHaveLength(1)
    expect(spf.newly_failing[0]).toMatchObject({
      ip: '149.72.10.20',
      proposed: 'softfail',
      outcome: 'newly_failing',
      newly_failing: 45,
      would_pass_dmarc: 0,
      current_spf_aligned_share: 90,
    })
    expect(spf.totals).toMatchObject({
      sources: 5,
      messages: 188,
      currently_passing_dmarc: 148,
      would_pass_dmarc: 103,
      newly_failing: { sources: 1, messages: 45 },
      newly_passing: { sources: 0, messages: 0 },
    })
    const google = spf.sources.find((s: any) => s.ip === '74.125.0.1')
    expect(google).toMatchObject({
      proposed: 'pass',
      outcome: 'unchanged',
      mechanism: 'include:_spf.google.com',
    })
  })

  test('a stricter DMARC policy splits collateral from likely spoofing', async () => {
    const res = await simulate({ dmarc_record: 'v=DMARC1; p=reject' })
    expect(res.status).toBe(200)
    const dmarc = res.body.data.dmarc
    expect(dmarc).toMatchObject({ policy: 'reject', pct: 100, testing: false, total_sources: 5 })
    expect(dmarc.totals).toMatchObject({
      failing: 40,
      proposed: { quarantined: 0, rejected: 40 },
      collateral: { sources: 1, failing: 5, rejected: 5 },
      likely_spoofing: { sources: 2, failing: 35, rejected: 35 },
    })
    expect(dmarc.sources[0]).toMatchObject({ ip: '203.0.113.9', looks_legitimate: false, failing: 25 })
    const both = await simulate({ spf_record: 'v=spf1 -all', dmarc_record: 'v=DMARC1; p=quarantine; pct=50' })
    expect(both.body.data.spf.totals.newly_failing).toEqual({ sources: 1, messages: 45 })
    expect(both.body.data.dmarc.disposition).toEqual({ sampled: 'quarantine', rest: 'none' })
  })

  test('proposals are validated before anything is replayed', async () => {
    const cases: [unknown, string][] = [
      [{}, 'spf_record'],
      [{ days: 30 }, 'spf_record'],
      [{ spf_record: 'v=spf1 foo:bar -all' }, 'spf_record'],
      [{ dmarc_record: 'p=reject' }, 'dmarc_record'],
      [{ dmarc_record: 'v=DMARC1; p=block' }, 'dmarc_record'],
      [{ spf_record: 'v=spf1 -all', days: 0 }, 'days'],
      [{ spf_record: 'v=spf1 -all', days: 91 }, 'days'],
      [{ spf_record: 42 }, 'spf_record'],
    ]
    for (const [body, field] of cases) {
      const res = await simulate(body)
      expect(res.status).toBe(400)
      expect(Object.keys(res.body.errors)).toEqual([field])
    }
    const malformed = await simulate('{"spf_record": ')
    expect(malformed.status).toBe(400)
    expect(Object.keys(malformed.body.errors)).toEqual(['body'])
  })
})
