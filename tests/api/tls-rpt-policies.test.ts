import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { submitTlsReport } from '../support/tls-rpt-submit.ts'

// TLS-RPT reports with several policies (RFC 8460 §4.4): one row per domain of the account, each
// counting its sessions once (domain/reports/tls-sessions.ts; docs/ingestion.md). The shapes are
// those of real reports: Microsoft lists a domain's DANE (tlsa) and MTA-STS (sts) policies side by
// side with the same sessions under each (seen in sebastka/tlsrpt's test data, whose files carry no
// licence, so these reports are written here), and a report may name several policy domains.

const ALPHA = 'alpha-tls.example'
const BETA = 'beta-tls.example'
const GAMMA = 'gamma-tls.example'
const DANE = 'dane-tls.example'

let t: TestApp
let owner: TestAccount
const db = () => t.db.database.db

type Policy = {
  type: 'sts' | 'tlsa' | 'no-policy-found'
  domain: string
  ok: number
  failed: number
  failures?: Array<[string, number]>
}

function report(id: string, policies: Policy[]) {
  return {
    'organization-name': 'Reporter Inc.',
    'date-range': { 'start-datetime': '2026-09-10T00:00:00Z', 'end-datetime': '2026-09-10T23:59:59Z' },
    'contact-info': 'tlsrpt@reporter.example',
    'report-id': id,
    policies: policies.map((p) => ({
      policy: {
        'policy-type': p.type,
        ...(p.type === 'sts' ? { 'policy-string': ['version: STSv1', 'mode: enforce'] } : {}),
        ...(p.type === 'tlsa' ? { 'policy-string': ['3 1 1 7FF8B87BB269715FEF08A0F4F0033D7A'] } : {}),
        'policy-domain': p.domain,
      },
      summary: { 'total-successful-session-count': p.ok, 'total-failure-session-count': p.failed },
      ...(p.failures === undefined
        ? {}
        : {
            'failure-details': p.failures.map(([type, n]) => ({
              'result-type': type,
              'receiving-mx-hostname': `mx.${p.domain}`,
              'failed-session-count': n,
            })),
          }),
    })),
  }
}

const submit = (body: unknown) => submitTlsReport(t, owner.token, body)

async function upload(body: unknown) {
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/reports', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/tlsrpt+json' },
      body: JSON.stringify(body),
    }),
  )
  return { status: response.status, body: (await response.json()) as any }
}

async function summary(domain: string) {
  const res = await t.request('GET', `/api/v1/domains/${domain}/tls-reports?from=2026-09-09&to=2026-09-11`, {
    token: owner.token,
  })
  expect(res.status).toBe(200)
  return res.body.data
}

const verify = (name: string) =>
  db().execute(
    sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${name}`,
  )

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  for (const name of [ALPHA, BETA, GAMMA, DANE])
    await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: name } })
  await verify(ALPHA)
  await verify(BETA)
  await verify(DANE)
}, 60_000)
afterAll(() => t.close())

describe('a report naming several policy domains', () => {
  test('each domain of the account gets its own policies and sessions; a foreign domain is left out', async () => {
    const res = await submit(
      report('several-domains', [
        {
          type: 'sts',
          domain: ALPHA,
          ok: 90,
          failed: 10,
          failures: [
            ['certificate-expired', 7],
            ['starttls-not-supported', 3],
          ],
        },
        { type: 'no-policy-found', domain: BETA, ok: 5, failed: 0 },
        { type: 'sts', domain: 'not-ours.example', ok: 1000, failed: 1000 },
      ]),
    )
    expect(res.status).toBe(201)
    const alpha = await summary(ALPHA)
    expect(alpha.totals).toEqual({ successful_sessions: 90, failed_sessions: 10, reports: 1 })
    expect(alpha.failure_types).toEqual([
      { result_type: 'certificate-expired', sessions: 7 },
      { result_type: 'starttls-not-supported', sessions: 3 },
    ])
    expect(res.body.data.id).toBe(alpha.reports[0].id)
    const beta = await summary(BETA)
    expect(beta.totals).toEqual({ successful_sessions: 5, failed_sessions: 0, reports: 1 })
    expect(beta.failure_types).toEqual([])
    const stored = rowsOf<{ domain: string; policies: string[] }>(
      await db().execute(sql`select d.name as domain,
          array(select p->>'policyDomain' from jsonb_array_elements(t.report->'policies') p) as policies
        from tls_reports t join domains d on d.id = t.domain_id
        where t.report_id = 'several-domains' order by d.name`),
    )
    expect(stored).toEqual([
      { domain: ALPHA, policies: [ALPHA] },
      { domain: BETA, policies: [BETA] },
    ])
    // The same report again stores nothing more.
    const again = await submit(
      report('several-domains', [{ type: 'sts', domain: ALPHA, ok: 90, failed: 10 }]),
    )
    expect(again.status).toBe(200)
    expect(again.body.data).toEqual({ id: alpha.reports[0].id, status: 'duplicate' })
  })

  test('a report for no domain of the account is refused, naming the first', async () => {
    const res = await submit(
      report('foreign', [{ type: 'sts', domain: 'not-ours.example', ok: 1, failed: 0 }]),
    )
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('not-ours.example')
  })

  test('a part for a domain waiting for verification makes the mail wait; the rest is stored now', async () => {
    const res = await upload(
      report('one-waits', [
        { type: 'sts', domain: ALPHA, ok: 3, failed: 0 },
        { type: 'sts', domain: GAMMA, ok: 8, failed: 1, failures: [['validation-failure', 1]] },
      ]),
    )
    expect(res.status).toBe(200)
    expect(res.body.data.status).toBe('quarantined')
    expect(res.body.data.quarantine.code).toBe('domain_not_verified')
    expect((await summary(ALPHA)).reports.map((r: any) => r.report_id)).toContain('one-waits')
    expect((await summary(GAMMA)).totals.reports).toBe(0)
    await verify(GAMMA)
    const retry = await t.request('POST', `/api/v1/ingest/quarantine/${res.body.data.id}/retry`, {
      token: owner.token,
    })
    expect(retry.status).toBe(200)
    const deadline = Date.now() + 15_000
    while ((await summary(GAMMA)).totals.reports === 0 && Date.now() < deadline) await Bun.sleep(100)
    expect((await summary(GAMMA)).totals).toEqual({ successful_sessions: 8, failed_sessions: 1, reports: 1 })
    // Alpha's part was a duplicate on the retry, not a second row.
    const alpha = rowsOf<{ n: number }>(
      await db().execute(sql`select count(*)::int as n from tls_reports where report_id = 'one-waits'`),
    )
    expect(alpha[0]?.n).toBe(2)
  })
})

describe('one domain under several policy types', () => {
  test('DANE and MTA-STS listing the same sessions count them once, by the DANE policy, failure types too', async () => {
    const res = await upload(
      report('dane-and-sts', [
        { type: 'tlsa', domain: DANE, ok: 4, failed: 1, failures: [['tlsa-invalid', 1]] },
        { type: 'sts', domain: DANE, ok: 3, failed: 2, failures: [['sts-webpki-invalid', 2]] },
      ]),
    )
    expect(res.status).toBe(201)
    expect(res.body.data.reports[0]).toMatchObject({
      status: 'stored',
      kind: 'tls-rpt',
      domain: DANE,
      report_id: 'dane-and-sts',
      reporter: 'Reporter Inc.',
    })
    const dane = await summary(DANE)
    expect(dane.totals).toEqual({ successful_sessions: 4, failed_sessions: 1, reports: 1 })
    expect(dane.failure_types).toEqual([{ result_type: 'tlsa-invalid', sessions: 1 }])
    // The stored report keeps both policies for its detail.
    const types = rowsOf<{ types: string[] }>(
      await db().execute(sql`select array(select p->>'policyType' from jsonb_array_elements(report->'policies') p) as types
        from tls_reports where report_id = 'dane-and-sts'`),
    )
    expect(types[0]?.types).toEqual(['tlsa', 'sts'])
  })

  test('without DANE, every policy adds up: no-policy-found sessions and two of one type are separate', async () => {
    await submit(
      report('sts-twice', [
        { type: 'no-policy-found', domain: DANE, ok: 50, failed: 0 },
        { type: 'sts', domain: DANE, ok: 6, failed: 1, failures: [['certificate-expired', 1]] },
        { type: 'sts', domain: DANE, ok: 2, failed: 0 },
      ]),
    )
    const row = rowsOf<{ success_count: string; failure_count: string }>(
      await db().execute(
        sql`select success_count, failure_count from tls_reports where report_id = 'sts-twice'`,
      ),
    )
    expect(row.map((r) => [Number(r.success_count), Number(r.failure_count)])).toEqual([[58, 1]])
  })

  test('DANE with no-policy-found beside it adds up; only MTA-STS repeats DANE', async () => {
    await submit(
      report('dane-and-none', [
        { type: 'tlsa', domain: DANE, ok: 10, failed: 0 },
        { type: 'no-policy-found', domain: DANE, ok: 5, failed: 0 },
        { type: 'sts', domain: DANE, ok: 10, failed: 0 },
      ]),
    )
    const row = rowsOf<{ success_count: string }>(
      await db().execute(sql`select success_count from tls_reports where report_id = 'dane-and-none'`),
    )
    expect(row.map((r) => Number(r.success_count))).toEqual([15])
  })
})
