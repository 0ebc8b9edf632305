import { describe, expect, test } from 'bun:test'
import { retryQuarantined } from '../../../domain/ingest/quarantine.ts'
import type { AggregateReportReads, Summary } from '../../../domain/reports/aggregate-reads.ts'
import {
  domainReportSummary,
  getDomainReport,
  listDomainReports,
  reportOverview,
} from '../../../domain/reports/aggregate-use-cases.ts'
import type { FailureTlsReads, TlsSummary } from '../../../domain/reports/failure-tls-reads.ts'
import {
  getFailureReport,
  listFailureReports,
  tlsReportSummary,
} from '../../../domain/reports/failure-tls-use-cases.ts'

// The report read use cases over in-memory ports: which account and domain they read, the order of
// their refusals (the domain before the period), and latestReportAt only for an empty period.

const ACCOUNT = 'acc-1'
const DOMAIN_ID = 7
const now = () => new Date('2026-03-31T12:00:00Z')
const page = { page: 1, perPage: 25 }

const emptySummary = (reports: number): Summary => ({
  totals: { messages: 0, dmarc_pass: 0, dkim_aligned: 0, spf_aligned: 0, reports },
  rates: { dmarc_pass: null, dkim_aligned: null, spf_aligned: null },
  daily: [],
  dispositions: [],
  top_failing_sources: [],
  reporters: [],
})

/** One account with one domain, `example.com`; every call is recorded. */
function reads(reportCount: number) {
  const calls: string[] = []
  const latest = new Date('2026-01-02T00:00:00Z')
  const reports: AggregateReportReads = {
    async domainId(accountId, name) {
      calls.push(`domainId ${accountId} ${name}`)
      return accountId === ACCOUNT && name === 'example.com' ? DOMAIN_ID : null
    },
    async listReports(accountId, domainId, period) {
      calls.push(`listReports ${accountId} ${domainId} ${period.from}..${period.to}`)
      return { items: Array.from({ length: reportCount }, (_, i) => ({ id: i + 1 })), total: reportCount }
    },
    async report(accountId, domainId, id) {
      calls.push(`report ${accountId} ${domainId} ${id}`)
      return id === 1 ? { report: { id: 1 }, records: [], total: 0 } : null
    },
    async summary(accountId, domainId) {
      calls.push(`summary ${accountId} ${domainId}`)
      return emptySummary(reportCount)
    },
    async latestReportAt(accountId, domainId) {
      calls.push(`latestReportAt ${accountId} ${domainId}`)
      return latest
    },
    async policyDistribution(accountId) {
      calls.push(`policyDistribution ${accountId}`)
      return [{ policy: 'none', domains: 1 }]
    },
    async learnedSelectors() {
      return []
    },
  }
  return { reports, calls, latest, now }
}

describe('aggregate report reads', () => {
  test('a domain of another account is domain_not_found before the period is read', async () => {
    const deps = reads(1)
    const found = await listDomainReports(deps, {
      accountId: ACCOUNT,
      domain: 'other.example',
      period: { days: 9999 },
      page,
    })
    expect(found).toEqual({ ok: false, failure: { code: 'domain_not_found' } })
    expect(deps.calls).toEqual([`domainId ${ACCOUNT} other.example`])
  })

  test('a bad period of the caller’s domain is a validation failure on its field', async () => {
    const deps = reads(1)
    const found = await listDomainReports(deps, {
      accountId: ACCOUNT,
      domain: 'Example.COM',
      period: { from: '2026-02-30' },
      page,
    })
    expect(found.ok).toBe(false)
    if (!found.ok)
      expect(found.failure).toMatchObject({
        code: 'validation_failed',
        errors: { from: [expect.any(String)] },
      })
    expect(deps.calls).toEqual([`domainId ${ACCOUNT} example.com`])
  })

  test('a period with reports lists them and says nothing of the latest report', async () => {
    const deps = reads(2)
    const found = await listDomainReports(deps, {
      accountId: ACCOUNT,
      domain: 'example.com',
      period: {},
      page,
    })
    expect(found).toEqual({ ok: true, value: { items: [{ id: 1 }, { id: 2 }], total: 2 } })
    expect(deps.calls).toEqual([
      `domainId ${ACCOUNT} example.com`,
      `listReports ${ACCOUNT} ${DOMAIN_ID} 2026-03-02..2026-03-31`,
    ])
  })

  test('an empty period says where the domain’s latest report begins', async () => {
    const deps = reads(0)
    const found = await listDomainReports(deps, {
      accountId: ACCOUNT,
      domain: 'example.com',
      period: {},
      page,
    })
    expect(found).toEqual({ ok: true, value: { items: [], total: 0, latestReportAt: deps.latest } })
    expect(deps.calls.at(-1)).toBe(`latestReportAt ${ACCOUNT} ${DOMAIN_ID}`)
  })

  test('a report of the domain, or not_found', async () => {
    const deps = reads(1)
    const input = { accountId: ACCOUNT, domain: 'example.com', page }
    expect(await getDomainReport(deps, { ...input, id: 1 })).toEqual({
      ok: true,
      value: { report: { id: 1 }, records: [], total: 0 },
    })
    expect(await getDomainReport(deps, { ...input, id: 2 })).toEqual({
      ok: false,
      failure: { code: 'not_found', resource: 'report' },
    })
  })

  test('the overview reads every domain of the account, with its policies', async () => {
    const deps = reads(0)
    const found = await reportOverview(deps, { accountId: ACCOUNT, period: { days: 7 } })
    expect(found).toEqual({
      ok: true,
      value: {
        period: { from: '2026-03-25', to: '2026-03-31' },
        summary: emptySummary(0),
        policies: [{ policy: 'none', domains: 1 }],
        latestReportAt: deps.latest,
      },
    })
    expect(deps.calls).toContain(`summary ${ACCOUNT} null`)
    expect(deps.calls).toContain(`latestReportAt ${ACCOUNT} null`)
  })

  test('a domain’s summary with reports has no latestReportAt', async () => {
    const deps = reads(3)
    const found = await domainReportSummary(deps, { accountId: ACCOUNT, domain: 'example.com', period: {} })
    expect(found.ok && Object.keys(found.value).sort()).toEqual(['period', 'summary'])
    expect(deps.calls).toContain(`summary ${ACCOUNT} ${DOMAIN_ID}`)
  })
})

describe('failure and TLS report reads', () => {
  const tls: TlsSummary = {
    totals: { successful_sessions: 1, failed_sessions: 0, reports: 1 },
    daily: [],
    failure_types: [],
    reports: [],
  }
  function failureTls() {
    const calls: unknown[] = []
    const store: Pick<FailureTlsReads, 'listForensic' | 'forensic' | 'tlsSummary'> = {
      async listForensic(accountId, filter) {
        calls.push({ accountId, filter })
        return { items: [], total: 0 }
      },
      async forensic(accountId, id) {
        return accountId === ACCOUNT && id === 5 ? { id: 5 } : null
      },
      async tlsSummary(accountId, domainId, from, to) {
        calls.push({ accountId, domainId, from, to })
        return tls
      },
    }
    return { store, calls }
  }

  test('since and until are strict ISO 8601, as for alerts: nothing rolled over, no local time', async () => {
    const { store, calls } = failureTls()
    const deps = { reports: reads(0).reports, failureTls: store }
    const list = (query: { since?: string; until?: string }) =>
      listFailureReports(deps, { accountId: ACCOUNT, ...query, page: { page: 1, perPage: 25 } })
    // Found by a conformance sweep: Date.parse read all of these, and answered 200.
    for (const since of [
      '2026-02-30',
      '1',
      'Nov 28 2026',
      '12/01/2026',
      '2026-11-28T00:00:00',
      '+275760-09-13',
    ])
      expect(await list({ since })).toMatchObject({
        ok: false,
        failure: { code: 'validation_failed', errors: { since: [expect.any(String)] } },
      })
    expect(await list({ since: '2026-12-01', until: '2026-01-01' })).toMatchObject({
      ok: false,
      failure: { errors: { until: ['The until field must not be before since.'] } },
    })
    expect(calls).toHaveLength(0)
    // A date as until covers its whole day: the store's bound is the next midnight, exclusive.
    expect((await list({ since: '2026-03-01', until: '2026-03-31' })).ok).toBe(true)
    expect(calls.at(-1)).toMatchObject({
      filter: { since: new Date('2026-03-01T00:00:00.000Z'), until: new Date('2026-04-01T00:00:00.000Z') },
    })
  })

  test('source_ip is IPv4 or IPv6, matched in the stored spelling', async () => {
    const { store, calls } = failureTls()
    const deps = { reports: reads(0).reports, failureTls: store }
    const list = (sourceIp: string) => listFailureReports(deps, { accountId: ACCOUNT, sourceIp, page })
    expect((await list('2001:DB8:0::1')).ok).toBe(true)
    expect((await list('::ffff:192.0.2.1')).ok).toBe(true)
    expect(calls.map((call) => (call as { filter: { sourceIp: string } }).filter.sourceIp)).toEqual([
      '2001:db8::1',
      '192.0.2.1',
    ])
    expect(await list('192.0.2.300')).toMatchObject({
      ok: false,
      failure: { errors: { source_ip: ['The source_ip field must be an IPv4 or IPv6 address.'] } },
    })
  })

  test('the list filters by the caller’s domain and the range; a foreign domain is refused first', async () => {
    const { store, calls } = failureTls()
    const deps = { reports: reads(0).reports, failureTls: store }
    const foreign = await listFailureReports(deps, {
      accountId: ACCOUNT,
      domain: 'other.example',
      since: 'nonsense',
      page,
    })
    expect(foreign).toEqual({ ok: false, failure: { code: 'domain_not_found' } })
    const found = await listFailureReports(deps, {
      accountId: ACCOUNT,
      domain: 'example.com',
      since: '2026-03-01',
      sourceIp: '192.0.2.1',
      page,
    })
    expect(found).toEqual({ ok: true, value: { items: [], total: 0 } })
    expect(calls).toEqual([
      {
        accountId: ACCOUNT,
        filter: {
          domainId: DOMAIN_ID,
          since: new Date('2026-03-01T00:00:00.000Z'),
          until: undefined,
          sourceIp: '192.0.2.1',
        },
      },
    ])
  })

  test('a failure report of another account is not_found', async () => {
    const deps = { failureTls: failureTls().store }
    expect(await getFailureReport(deps, { accountId: ACCOUNT, id: 5 })).toEqual({
      ok: true,
      value: { id: 5 },
    })
    expect(await getFailureReport(deps, { accountId: 'acc-2', id: 5 })).toEqual({
      ok: false,
      failure: { code: 'not_found', resource: 'report' },
    })
  })

  test('the TLS summary reads the caller’s domain over the period', async () => {
    const { store, calls } = failureTls()
    const found = await tlsReportSummary(
      { reports: reads(0).reports, failureTls: store, now },
      { accountId: ACCOUNT, domain: 'example.com', period: { days: 1 } },
    )
    expect(found).toEqual({
      ok: true,
      value: { period: { from: '2026-03-31', to: '2026-03-31' }, summary: tls },
    })
    expect(calls).toEqual([{ accountId: ACCOUNT, domainId: DOMAIN_ID, from: '2026-03-31', to: '2026-03-31' }])
  })
})

test('a quarantined message goes back to the queue; another account’s, or none, is not_found', async () => {
  const retried: string[] = []
  const messages = {
    async retry(accountId: string, id: string) {
      retried.push(`${accountId} ${id}`)
      return accountId === ACCOUNT && id === 'm-1'
    },
  }
  expect(await retryQuarantined({ messages }, { accountId: ACCOUNT, id: 'm-1' })).toEqual({
    ok: true,
    value: { id: 'm-1' },
  })
  expect(await retryQuarantined({ messages }, { accountId: 'acc-2', id: 'm-1' })).toEqual({
    ok: false,
    failure: { code: 'not_found', resource: 'quarantined message' },
  })
  expect(retried).toEqual([`${ACCOUNT} m-1`, 'acc-2 m-1'])
})
