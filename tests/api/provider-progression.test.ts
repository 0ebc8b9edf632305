import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { evaluateAccount } from '../../domain/alerts/evaluation.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { CHECK_DOMAIN, PROGRESS_DOMAIN, SCHEDULE_PROGRESSION } from '../../infrastructure/queue/catalogue.ts'
import { alertEvaluationDeps } from '../../src/compose/alerts.ts'
import { stores } from '../../src/compose/stores.ts'
import { startWorkers } from '../../src/worker.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { importPowerDnsZone } from '../support/powerdns-import.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts'
import { markLegitimateSource, type SourceDay, seedReportDays } from './dmarc-world.ts'

// Policy progression for a domain whose zone is on a connected DNS provider (issue #19, part 2),
// end to end against a real PowerDNS: the daily job advances an `automatic` domain from p=none to
// p=quarantine by writing its `_dmarc` TXT through the PowerDNS API (read back from the provider
// and over DNS, audited), the next posture check reads the new policy over DNS from PowerDNS's
// own DNS port, `dmarc.progressed` reaches a real webhook receiver, and a rollback restores the
// previous record. A provider that refuses the write (a loopback proxy in front of the same
// PowerDNS answering 503 to writes) leaves the previous record, fails the job, and the retry
// applies the step once the provider accepts writes again.

const OLD_DMARC = 'v=DMARC1; p=none; rua=mailto:dmarc@acme.test'
const GOOD: SourceDay = { ip: '74.125.0.1', messages: 1_000, pass: 995 }

let pdns: PowerDnsServer
let t: TestApp
let owner: TestAccount
let other: TestAccount
let receiver: WebhookReceiver
let proxy: ReturnType<typeof Bun.serve>
let refuseWrites = 0

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: account.token, body })
const dmarcOverDns = async (domain: string) => {
  const answer = await t.runtime.verificationDns.resolve(`_dmarc.${domain}`, 'TXT')
  if (answer.status !== 'ok') return []
  return answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : ''))
}

async function connectAndImport(
  account: TestAccount,
  baseUrl: string | null,
  zone: string,
  level = 'automatic',
) {
  const id = await importPowerDnsZone(t, account, { baseUrl, apiKey: pdns.apiKey, zone, level })
  await markLegitimateSource(t.db.database.db, id, GOOD.ip)
  await seedReportDays(t.db.database.db, t.clock.now, account.accountId, id, [14, 1], [GOOD])
  return id
}

/** Sends a job and waits until pg-boss has it completed (or, with `retries`, failed `retries` times). */
async function jobState(queue: string, id: string) {
  return until(
    () => t.runtime.boss!.getJobById(queue, id),
    (job) => job?.state === 'completed' || job?.state === 'failed' || (job?.retryCount ?? 0) > 0,
  )
}

describe('policy progression through a connected PowerDNS', () => {
  beforeAll(async () => {
    pdns = await startPowerDns(['acme.test', 'flaky.test', 'assist.test'])
    // TTL 1: the posture check's caching resolver does not keep the old policy past the write.
    await pdns.pdnsutil('add-record', 'acme.test', '_dmarc', 'TXT', '1', `"${OLD_DMARC}"`)
    await pdns.pdnsutil('add-record', 'flaky.test', '_dmarc', 'TXT', '1', '"v=DMARC1; p=none"')
    await pdns.pdnsutil('add-record', 'assist.test', '_dmarc', 'TXT', '1', '"v=DMARC1; p=none"')
    // The same PowerDNS behind a proxy that can refuse record writes (PATCH) with a 503.
    proxy = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        const url = new URL(request.url)
        if (request.method === 'PATCH' && refuseWrites > 0) {
          refuseWrites--
          return new Response('{"error":"backend unavailable"}', { status: 503 })
        }
        const body = request.method === 'GET' ? undefined : await request.arrayBuffer()
        return fetch(`${pdns.apiUrl}${url.pathname}${url.search}`, {
          method: request.method,
          headers: request.headers,
          body,
        })
      },
    })
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
    const secret = (await call(owner, 'POST', '/webhooks/secret/rotate')).body.data.secret
    receiver = startWebhookReceiver({ secret })
    expect((await call(owner, 'PUT', '/webhooks', { url: receiver.url })).status).toBe(200)
    await connectAndImport(owner, pdns.apiUrl, 'acme.test')
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    await receiver?.stop()
    proxy?.stop(true)
    await pdns?.stop()
  })

  const postureCheck = async (account: TestAccount, name: string) => {
    const id = await t.runtime.boss!.send(CHECK_DOMAIN.name, { accountId: account.accountId, name })
    expect((await jobState(CHECK_DOMAIN.name, id!))?.state).toBe('completed')
    return (await call(account, 'GET', `/domains/${name}/status`)).body.data
  }
  const tick = () => {
    t.clock.now = new Date(t.clock.now.getTime() + 2_000)
  }
  const progressed = async () =>
    receiver.arrivals
      .map((a) => ({ verified: a.verified, body: JSON.parse(a.body) }))
      .filter((a) => a.body.event === 'dmarc.progressed')

  test('automatic: none → quarantine written through PowerDNS, read over DNS, dmarc.progressed, rollback', async () => {
    expect((await postureCheck(owner, 'acme.test')).dmarc_policy).toBe('none')

    await t.runtime.boss!.send(SCHEDULE_PROGRESSION.name, {})
    const quarantine = 'v=DMARC1; p=quarantine; rua=mailto:dmarc@acme.test'
    // Written through the provider write path: logged, verified by its read-back, audited.
    const write = await until(
      async () =>
        (await call(owner, 'GET', '/dns-providers/writes')).body.data.find(
          (w: any) => w.name === '_dmarc.acme.test',
        ),
      (w) => w?.status === 'verified',
    )
    expect(await dmarcOverDns('acme.test')).toEqual([quarantine])
    expect(write).toMatchObject({
      status: 'verified',
      actor: 'system',
      before: { values: [OLD_DMARC], ttl: 1 },
      after: { values: [quarantine], ttl: 1 },
    })
    // The policy change is recorded once the write is done (audit: the write, then the step).
    const audit = await until(
      async () =>
        rowsOf<{ action: string }>(
          await t.db.database.db.execute(
            sql`select action from audit_log where account_id = ${owner.accountId} order by id`,
          ),
        ).map((a) => a.action),
      (actions) => actions.includes('dmarc.progress'),
    )
    expect(audit.slice(-2)).toEqual(['dns_provider.write', 'dmarc.progress'])

    // The next posture check reads the new policy over DNS (PowerDNS answers on its port), once the
    // old answer's TTL (1 s) has passed on the app's clock (its DNS cache follows that clock).
    tick()
    expect((await postureCheck(owner, 'acme.test')).dmarc_policy).toBe('quarantine')

    const events = await until(progressed, (list) => list.length === 1)
    expect(events[0]!.verified).toBe(true)
    expect(events[0]!.body.data).toMatchObject({ domain: 'acme.test', from: 'none', to: 'quarantine' })

    const view = (await call(owner, 'GET', '/domains/acme.test/dmarc/progression')).body.data
    expect(view.history[0]).toMatchObject({ kind: 'advance', status: 'applied', actor: 'system' })
    expect(view).toMatchObject({
      hosted: null,
      record: { home: 'provider', record: quarantine, policy: 'quarantine' },
    })

    const rolled = await call(owner, 'POST', '/domains/acme.test/dmarc/progression/rollback', {
      reason: 'a partner complained',
    })
    expect(rolled.status).toBe(200)
    expect(rolled.body.data.change).toMatchObject({ kind: 'rollback', to: { policy: 'none' } })
    // The previous record, exactly, at the provider and over DNS.
    expect(await dmarcOverDns('acme.test')).toEqual([OLD_DMARC])
    const back = await until(progressed, (list) => list.length === 2)
    expect(back[1]!.body.data).toMatchObject({ domain: 'acme.test', from: 'quarantine', to: 'none' })
    tick()
    expect((await postureCheck(owner, 'acme.test')).dmarc_policy).toBe('none')
  }, 60_000)

  test('a write the provider refuses leaves the previous record; the job fails and its retry applies it', async () => {
    const id = await connectAndImport(other, `http://127.0.0.1:${proxy.port}`, 'flaky.test')
    refuseWrites = 1
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
    tick() // the retry writes later than the failed write (the write log is ordered by time)
    expect(await dmarcOverDns('flaky.test')).toEqual(['v=DMARC1; p=none'])
    const writes = (await call(other, 'GET', '/dns-providers/writes')).body.data
    expect(writes.filter((w: any) => w.name === '_dmarc.flaky.test')).toEqual([
      expect.objectContaining({ status: 'failed', actor: 'system' }),
    ])
    const history = (await call(other, 'GET', '/domains/flaky.test/dmarc/progression')).body.data.history
    expect(history).toEqual([])
    // The operations evaluation raises an alert for the record that could not be written.
    await evaluateAccount(alertEvaluationDeps(stores(t.runtime.database), t.runtime), other.accountId)
    const alerts = (await call(other, 'GET', '/alerts?status=open')).body.data
    expect(alerts).toContainEqual(
      expect.objectContaining({
        type: 'dns_write_failing',
        subject: '_dmarc.flaky.test/TXT',
        severity: 'high',
      }),
    )

    // The retry (the provider accepts writes again) takes the step.
    await until(
      () => t.runtime.boss!.getJobById(PROGRESS_DOMAIN.name, jobId!),
      (job) => job?.state === 'completed',
    )
    expect(await dmarcOverDns('flaky.test')).toEqual(['v=DMARC1; p=quarantine'])
    // A successful write of the record resolves the alert.
    await evaluateAccount(alertEvaluationDeps(stores(t.runtime.database), t.runtime), other.accountId)
    const open = (await call(other, 'GET', '/alerts?status=open')).body.data
    expect(open.filter((a: any) => a.type === 'dns_write_failing')).toEqual([])
  }, 60_000)

  test('assisted: the run proposes, nothing is written; approving writes it through PowerDNS', async () => {
    const id = await connectAndImport(owner, null, 'assist.test', 'assisted')
    const jobId = await t.runtime.boss!.send(PROGRESS_DOMAIN.name, {
      accountId: owner.accountId,
      domainId: id,
    })
    await until(
      () => t.runtime.boss!.getJobById(PROGRESS_DOMAIN.name, jobId!),
      (job) => job?.state === 'completed',
    )
    const view = (await call(owner, 'GET', '/domains/assist.test/dmarc/progression')).body.data
    expect(view.pending).toMatchObject({
      kind: 'advance',
      status: 'proposed',
      from_record: 'v=DMARC1; p=none',
      to_record: 'v=DMARC1; p=quarantine',
    })
    expect(await dmarcOverDns('assist.test')).toEqual(['v=DMARC1; p=none'])

    const approved = await call(owner, 'POST', '/domains/assist.test/dmarc/progression/approve')
    expect(approved.status).toBe(200)
    expect(await dmarcOverDns('assist.test')).toEqual(['v=DMARC1; p=quarantine'])
    const write = (await call(owner, 'GET', '/dns-providers/writes')).body.data.find(
      (w: any) => w.name === '_dmarc.assist.test',
    )
    expect(write).toMatchObject({ status: 'verified' })
    expect(write.actor).toStartWith('user:')
    const events = await until(progressed, (list) => list.some((e) => e.body.data.domain === 'assist.test'))
    expect(events.find((e) => e.body.data.domain === 'assist.test')!.body.data).toMatchObject({
      from: 'none',
      to: 'quarantine',
    })
  }, 60_000)
})
