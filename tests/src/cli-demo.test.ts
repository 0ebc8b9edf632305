import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { DEMO_DOMAIN } from '../../domain/demo/demo-world.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { runCli } from '../support/processes.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'

// `bun run cli demo` against a running service (app, queue and worker on one database): the reports
// go through the intake and the worker, and the API shows their figures, sources and alerts.

let t: TestApp
let dns: DnsTestServer
let owner: TestAccount
let env: Record<string, string>

beforeAll(async () => {
  // The demo's own names are answered in-process; everything else (its SPF includes) asks this
  // empty loopback server, which answers NXDOMAIN at once.
  dns = await startDnsServer({})
  const dnsEnv = { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' }
  t = await startTestApp({ ...dnsEnv, RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account('demo-owner@example.org')
  env = { DATABASE_URL: t.db.url!, ...dnsEnv }
})
afterAll(async () => {
  await t.close()
  await dns.stop()
})

const get = (path: string) => t.request('GET', `/api/v1${path}`, { token: owner.token })

test('demo installs the demo domain and its reports through the intake', async () => {
  const run = await runCli(['demo', '--email', owner.email], env)
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  const out = JSON.parse(run.stdout)
  expect(out).toMatchObject({ domain: DEMO_DOMAIN, aggregate: 90, tls: 7, digested: true })
  expect(out.failure).toBeGreaterThanOrEqual(5)

  const domains = await get('/domains')
  expect(domains.body.data).toEqual([
    expect.objectContaining({ name: DEMO_DOMAIN, demo: true, verified: true }),
  ])

  // Every message was stored, none quarantined, all as the intake would for real mail.
  const statuses = rowsOf<{ status: string; n: number }>(
    await t.db.database.db.execute(
      sql`select status, count(*)::int as n from ingest_messages where account_id = ${owner.accountId} group by status`,
    ),
  )
  expect(statuses).toEqual([{ status: 'processed', n: out.messages }])
  expect((await get(`/domains/${DEMO_DOMAIN}/reports?days=90&per_page=100`)).body.meta.total).toBe(90)
  expect((await get(`/domains/${DEMO_DOMAIN}/tls-reports`)).body.data.totals.reports).toBe(7)
  expect((await get('/dmarc-reports/forensic/reports')).body.meta.total).toBe(out.failure)

  const sources = (await get(`/domains/${DEMO_DOMAIN}/sources?per_page=100`)).body.data as {
    service: { id: string } | null
    status: string
  }[]
  const services = new Set(sources.map((s) => s.service?.id ?? s.status))
  for (const expected of ['google_workspace', 'microsoft_365', 'sendgrid', 'google_groups', 'suspicious'])
    expect(services).toContain(expected)

  // The alert rules ran as soon as the worker had digested the reports.
  const alerts = await until(
    async () =>
      ((await get(`/alerts?domain=${DEMO_DOMAIN}`)).body.data as { type: string }[]).map((a) => a.type),
    (types) => types.includes('spoofing_attempt'),
  )
  expect(alerts).toContain('dmarc_failure_rate')
})

test('a second demo is refused; the name cannot be added by hand', async () => {
  const again = await runCli(['demo', '--email', owner.email], env)
  expect(again.code).toBe(1)
  expect(again.stderr).toContain('remove it first with --remove')
  const byHand = await t.request('POST', '/api/v1/domains', {
    token: owner.token,
    body: { domain_name: DEMO_DOMAIN },
  })
  expect(byHand.status).toBe(400)
  expect(byHand.body.errors.domain_name[0]).toContain('reserved for the demo')
})

test('demo --remove deletes the domain and every figure stored for it', async () => {
  const run = await runCli(['demo', '--email', owner.email, '--remove'], env)
  expect(run.code).toBe(0)
  expect(JSON.parse(run.stdout)).toEqual({ domain: DEMO_DOMAIN, removed: true })
  expect((await get('/domains')).body.data).toEqual([])
  for (const table of [
    'aggregate_reports',
    'aggregate_records',
    'daily_rollups',
    'daily_domain_totals',
    'alerts',
  ]) {
    const [row] = rowsOf<{ n: number }>(
      await t.db.database.db.execute(
        sql`select count(*)::int as n from ${sql.identifier(table)} where account_id = ${owner.accountId}`,
      ),
    )
    expect({ table, n: row!.n }).toEqual({ table, n: 0 })
  }
  const nothing = await runCli(['demo', '--email', owner.email, '--remove'], env)
  expect(JSON.parse(nothing.stdout).removed).toBe(false)
  const nobody = await runCli(['demo', '--email', 'nobody@example.org'], env)
  expect(nobody.code).toBe(1)
})

test('demo after demo --remove: digested at once, with exactly the first demo’s figures', async () => {
  // The worker remembers a domain's match for a few seconds: the removed domain's id must not be
  // used again for the new demo's reports (docs/ingestion.md; tests/api/domain-readded.test.ts).
  const run = await runCli(['demo', '--email', owner.email], env)
  expect(run.code).toBe(0)
  const out = JSON.parse(run.stdout)
  expect(out).toMatchObject({ domain: DEMO_DOMAIN, aggregate: 90, tls: 7, digested: true })
  expect((await get(`/domains/${DEMO_DOMAIN}/reports?days=90&per_page=100`)).body.meta.total).toBe(90)
  expect((await get(`/domains/${DEMO_DOMAIN}/tls-reports`)).body.data.totals.reports).toBe(7)
  const [reports] = rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from aggregate_reports where account_id = ${owner.accountId}`,
    ),
  )
  expect(reports!.n).toBe(90)
  const failed = rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from ingest_messages where account_id = ${owner.accountId} and status <> 'processed'`,
    ),
  )
  expect(failed).toEqual([{ n: 0 }])
}, 60_000)
