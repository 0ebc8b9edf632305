import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { evaluateAccount } from '../../domain/alerts/evaluation.ts'
import { PROGRESS_DOMAIN } from '../../infrastructure/queue/catalogue.ts'
import { alertEvaluationDeps } from '../../src/compose/alerts.ts'
import { stores } from '../../src/compose/stores.ts'
import { startWorkers } from '../../src/worker.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { flakyProxy, importPowerDnsZone } from '../support/powerdns-import.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { markLegitimateSource, type SourceDay, seedReportDays } from './dmarc-world.ts'

// DMARC proposals and provider reads (issue #19, part 2) against a real PowerDNS: an `assisted`
// domain's proposal is rejected, and one whose `_dmarc` record was edited at the provider since is
// refused with 409 `proposal_stale`; an `automatic` domain whose provider cannot be read (a
// loopback proxy in front of the same PowerDNS answering 503 to reads) writes nothing, fails the
// job and raises `dns_provider_read_failing`; the retry takes the step once reads work again, and
// the alert resolves.

const GOOD: SourceDay = { ip: '74.125.0.1', messages: 1_000, pass: 995 }

let pdns: PowerDnsServer
let t: TestApp
let owner: TestAccount
let other: TestAccount
let proxy: ReturnType<typeof Bun.serve>
let refuseReads = false

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: account.token, body })
const dmarcOverDns = async (domain: string) => {
  const answer = await t.runtime.verificationDns.resolve(`_dmarc.${domain}`, 'TXT')
  if (answer.status !== 'ok') return []
  return answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : ''))
}

async function connectAndImport(account: TestAccount, baseUrl: string, zone: string, level: string) {
  const id = await importPowerDnsZone(t, account, { baseUrl, apiKey: pdns.apiKey, zone, level })
  await markLegitimateSource(t.db.database.db, id, GOOD.ip)
  await seedReportDays(t.db.database.db, t.clock.now, account.accountId, id, [14, 1], [GOOD])
  return id
}

const run = async (account: TestAccount, domainId: number) => {
  const jobId = await t.runtime.boss!.send(PROGRESS_DOMAIN.name, { accountId: account.accountId, domainId })
  return until(
    () => t.runtime.boss!.getJobById(PROGRESS_DOMAIN.name, jobId!),
    (job) => job?.state === 'completed',
  )
}

describe('DMARC proposals and provider reads through a connected PowerDNS', () => {
  beforeAll(async () => {
    pdns = await startPowerDns(['assist.test', 'unread.test'])
    await pdns.pdnsutil('add-record', 'assist.test', '_dmarc', 'TXT', '1', '"v=DMARC1; p=none"')
    await pdns.pdnsutil('add-record', 'unread.test', '_dmarc', 'TXT', '1', '"v=DMARC1; p=none"')
    // The same PowerDNS behind a proxy that can fail every read (GET) with a 503.
    proxy = flakyProxy(pdns.apiUrl, (request) => request.method === 'GET' && refuseReads)
    t = await startTestApp(
      {
        WEBHOOK_ALLOW_PRIVATE: '1',
        DNS_SERVERS: `127.0.0.1:${pdns.dnsPort}`,
        DNS_TIMEOUT_MS: '1000',
        RATE_LIMIT_API_PER_MINUTE: '10000',
      },
      { queue: true },
    )
    await startWorkers(t.runtime.boss!, t.runtime)
    owner = await t.account()
    other = await t.account()
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    proxy?.stop(true)
    await pdns?.stop()
  })

  test('assisted: a proposal is rejected; one whose record was edited since is refused with 409', async () => {
    const id = await connectAndImport(owner, pdns.apiUrl, 'assist.test', 'assisted')
    await run(owner, id)
    const pending = async () => (await call(owner, 'GET', '/domains/assist.test/dmarc/progression')).body.data
    expect((await pending()).pending).toMatchObject({
      status: 'proposed',
      to_record: 'v=DMARC1; p=quarantine',
    })

    const rejected = await call(owner, 'POST', '/domains/assist.test/dmarc/progression/reject')
    expect(rejected.status).toBe(200)
    expect(rejected.body.data.rejected).toMatchObject({
      status: 'withdrawn',
      to_record: 'v=DMARC1; p=quarantine',
    })
    expect((await pending()).pending).toBeNull()
    expect((await call(owner, 'POST', '/domains/assist.test/dmarc/progression/reject')).status).toBe(400)
    expect(await dmarcOverDns('assist.test')).toEqual(['v=DMARC1; p=none'])

    // The next run proposes again; the record is edited at the provider before the approval.
    await run(owner, id)
    expect((await pending()).pending).toMatchObject({ status: 'proposed', from_record: 'v=DMARC1; p=none' })
    const edited = 'v=DMARC1; p=none; rua=mailto:reports@assist.test'
    await pdns.pdnsutil('replace-rrset', 'assist.test', '_dmarc', 'TXT', '1', `"${edited}"`)
    const approved = await call(owner, 'POST', '/domains/assist.test/dmarc/progression/approve')
    expect(approved.status).toBe(409)
    expect(approved.body).toMatchObject({ error: 'proposal_stale' })
    expect(approved.body.message).toContain(edited)
    expect((await pending()).pending).toBeNull()
    expect((await pending()).history[0]).toMatchObject({
      status: 'withdrawn',
      from_record: 'v=DMARC1; p=none',
    })
    // Nothing was written over the edited record (PowerDNS's packet cache may still answer the
    // old one over DNS for a while: the provider's API is what holds it).
    const writes = (await call(owner, 'GET', '/dns-providers/writes')).body.data
    expect(writes.filter((w: any) => w.name === '_dmarc.assist.test')).toEqual([])
  }, 60_000)

  test('a provider that cannot be read: nothing written, the job retries, the alert is raised and resolves', async () => {
    const id = await connectAndImport(other, `http://127.0.0.1:${proxy.port}`, 'unread.test', 'automatic')
    refuseReads = true
    const jobId = await t.runtime.boss!.send(
      PROGRESS_DOMAIN.name,
      { accountId: other.accountId, domainId: id },
      { retryDelay: 4, retryBackoff: false },
    )
    const first = await until(
      () => t.runtime.boss!.getJobById(PROGRESS_DOMAIN.name, jobId!),
      (job) => job?.state === 'retry' || job?.state === 'completed',
    )
    expect(first?.state).toBe('retry')
    expect(await dmarcOverDns('unread.test')).toEqual(['v=DMARC1; p=none'])
    const writes = (await call(other, 'GET', '/dns-providers/writes')).body.data
    expect(writes.filter((w: any) => w.name === '_dmarc.unread.test')).toEqual([])
    // The failed read enqueued the account's operations alerts.
    const alerts = await until(
      () => call(other, 'GET', '/alerts?status=open').then((r) => r.body.data as any[]),
      (list) => list.some((a) => a.type === 'dns_provider_read_failing'),
    )
    const alert = alerts.find((a) => a.type === 'dns_provider_read_failing')
    expect(alert).toMatchObject({ severity: 'high', domain: null })
    expect(alert.details.evidence.error).toContain('503')
    expect(alert.details.remedy).toContain('retried')

    // Reads work again: the retry takes the step through the provider.
    refuseReads = false
    await until(
      () => t.runtime.boss!.getJobById(PROGRESS_DOMAIN.name, jobId!),
      (job) => job?.state === 'completed',
    )
    expect(await dmarcOverDns('unread.test')).toEqual(['v=DMARC1; p=quarantine'])
    await evaluateAccount(alertEvaluationDeps(stores(t.runtime.database), t.runtime), other.accountId)
    const open = (await call(other, 'GET', '/alerts?status=open')).body.data
    expect(open.filter((a: any) => a.type === 'dns_provider_read_failing')).toEqual([])
  }, 60_000)
})
