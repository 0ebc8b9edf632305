import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { evaluateAccount } from '../../domain/alerts/evaluation.ts'
import { SPF_PROVIDER_RETRY } from '../../infrastructure/queue/catalogue.ts'
import { alertEvaluationDeps } from '../../src/compose/alerts.ts'
import { stores } from '../../src/compose/stores.ts'
import { startWorkers } from '../../src/worker.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { flakyProxy, importPowerDnsZone } from '../support/powerdns-import.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { type SourceDay, seedReportDays } from './dmarc-world.ts'

// SPF writes through a connected DNS provider that fail, and changes made while another waits
// (issue #19, part 2), against a real PowerDNS. (a) `automatic`: with the provider's API answering
// 503 (a loopback proxy in front of PowerDNS), add-to-spf leaves the previous record in place,
// answers `retrying`, stores the write and raises `spf_provider_write_failing`; the
// `spf.provider-retry` job fails again while the API is down, then writes the record once it
// answers (read back over DNS) and the alert resolves; a retry whose provider record changed
// meanwhile is given up and the alert says so. (b) `assisted`: a second add-to-spf builds on the
// waiting proposal; approving the one proposal writes both sources.

const OLD_SPF = 'v=spf1 ip4:192.0.2.10 -all'
const SITE = 'site-verification=abc123'
const PARTNER: SourceDay = { ip: '198.51.100.7', messages: 100, pass: 0 }
const OTHER: SourceDay = { ip: '203.0.113.9', messages: 100, pass: 0 }
const THIRD: SourceDay = { ip: '203.0.113.30', messages: 100, pass: 0 }
const FOURTH: SourceDay = { ip: '203.0.113.40', messages: 100, pass: 0 }
const WITH_PARTNER = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all'
const WITH_BOTH = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 ip4:203.0.113.9 -all'

let pdns: PowerDnsServer
let t: TestApp
let owner: TestAccount
let other: TestAccount
let proxy: ReturnType<typeof Bun.serve>
let down = false

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: account.token, body })
const apexTxt = async (domain: string) => {
  const answer = await t.runtime.verificationDns.resolve(domain, 'TXT')
  if (answer.status !== 'ok') return []
  return answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : '')).sort()
}
const proposals = async (account: TestAccount, domain: string) =>
  (await call(account, 'GET', `/domains/${domain}/spf/proposals`)).body.data.proposals as any[]
const openAlerts = async (account: TestAccount) =>
  (await call(account, 'GET', '/alerts?status=open')).body.data as any[]

async function connectAndImport(account: TestAccount, baseUrl: string, zone: string, level: string) {
  const id = await importPowerDnsZone(t, account, { baseUrl, apiKey: pdns.apiKey, zone, level })
  await seedReportDays(
    t.db.database.db,
    t.clock.now,
    account.accountId,
    id,
    [3, 1],
    [PARTNER, OTHER, THIRD, FOURTH],
  )
  return id
}

/** The retry job of a stored write, due now instead of after its backoff; resolves when it ran. */
async function runRetryNow(retryId: number, state: 'retry' | 'completed') {
  const boss = t.runtime.boss!
  const find = async () =>
    (await boss.findJobs<{ proposalId: number }>(SPF_PROVIDER_RETRY.name)).find(
      (j) => j.data.proposalId === retryId,
    )
  const job = await find()
  expect(job).toBeDefined()
  job!.startedOn ??= new Date(0)
  await t.db.database.db.execute(
    sql`update pgboss.job set start_after = now() where id = ${job!.id} and state in ('created', 'retry')`,
  )
  // A failed attempt leaves the job in `retry` (its retry count grows when it is fetched again).
  return until(find, (j) => j?.state === state && j.startedOn !== null && j.startedOn > job!.startedOn!)
}

describe('SPF writes retried, and changes built on a waiting one, through a connected PowerDNS', () => {
  beforeAll(async () => {
    pdns = await startPowerDns(['retry.test', 'combine.test'])
    for (const zone of ['retry.test', 'combine.test']) {
      await pdns.pdnsutil('add-record', zone, '@', 'TXT', '1', `"${OLD_SPF}"`)
      await pdns.pdnsutil('add-record', zone, '@', 'TXT', '1', `"${SITE}"`)
    }
    // The same PowerDNS behind a proxy whose API can be "down" (every request answered 503).
    proxy = flakyProxy(pdns.apiUrl, () => down)
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
    await connectAndImport(owner, `http://127.0.0.1:${proxy.port}`, 'retry.test', 'automatic')
    await connectAndImport(other, pdns.apiUrl, 'combine.test', 'assisted')
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    proxy?.stop(true)
    await pdns?.stop()
  })

  test('automatic: a failed write keeps the previous record, is retried by the job, and the alert resolves', async () => {
    down = true
    const res = await call(owner, 'POST', `/domains/retry.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(res.status).toBe(200)
    expect(res.body.data.provider).toMatchObject({ status: 'retrying', write_id: null })
    expect(res.body.data.provider.error).toContain('503')
    const retryId = res.body.data.provider.proposal_id as number
    expect(retryId).toBeGreaterThan(0)
    expect(await apexTxt('retry.test')).toEqual([OLD_SPF, SITE].sort())
    expect((await proposals(owner, 'retry.test'))[0]).toMatchObject({
      id: retryId,
      status: 'retrying',
      from_record: OLD_SPF,
      to_record: WITH_PARTNER,
      attempts: 0,
    })
    const raised = await until(
      () => openAlerts(owner),
      (list) => list.some((a) => a.type === 'spf_provider_write_failing'),
    )
    const alert = raised.find((a) => a.type === 'spf_provider_write_failing')
    expect(alert).toMatchObject({ severity: 'high', domain: null })
    expect(alert.details.evidence).toMatchObject({
      domain: 'retry.test',
      status: 'retrying',
      retry_id: retryId,
    })
    expect(alert.details.remedy).toContain('retried')
    expect(raised.some((a) => a.type === 'dns_provider_read_failing')).toBe(true)

    // Still down: the job's attempt fails, nothing is written, the write waits for the next one.
    await runRetryNow(retryId, 'retry')
    expect(await apexTxt('retry.test')).toEqual([OLD_SPF, SITE].sort())
    expect((await proposals(owner, 'retry.test'))[0]).toMatchObject({ status: 'retrying', attempts: 1 })

    // The API answers again: the retry writes it through the provider write path.
    down = false
    await runRetryNow(retryId, 'completed')
    const [applied] = await proposals(owner, 'retry.test')
    expect(applied).toMatchObject({ id: retryId, status: 'applied', decided_by: 'system' })
    expect(applied.write_id).toEqual(expect.any(String))
    const write = (await call(owner, 'GET', `/dns-providers/writes/${applied.write_id}`)).body.data
    expect(write).toMatchObject({ status: 'verified', name: 'retry.test', type: 'TXT' })
    expect(write.actor).toStartWith('user:')
    t.clock.now = new Date(t.clock.now.getTime() + 2_000)
    expect(await apexTxt('retry.test')).toEqual([WITH_PARTNER, SITE].sort())
    await evaluateAccount(alertEvaluationDeps(stores(t.runtime.database), t.runtime), owner.accountId)
    const open = await openAlerts(owner)
    expect(open.filter((a) => a.type === 'spf_provider_write_failing')).toEqual([])
    expect(open.filter((a) => a.type === 'dns_provider_read_failing')).toEqual([])
  }, 90_000)

  test('automatic: a retry whose provider record changed meanwhile is given up, and the alert says so', async () => {
    down = true
    const res = await call(owner, 'POST', `/domains/retry.test/sources/${OTHER.ip}/add-to-spf`, {})
    expect(res.body.data.provider).toMatchObject({ status: 'retrying' })
    const retryId = res.body.data.provider.proposal_id as number
    // Someone edits the record at the provider meanwhile.
    const edited = 'v=spf1 ip4:192.0.2.99 -all'
    await pdns.pdnsutil('replace-rrset', 'retry.test', '@', 'TXT', '1', `"${edited}"`, `"${SITE}"`)
    down = false
    await runRetryNow(retryId, 'completed')
    const [given] = await proposals(owner, 'retry.test')
    expect(given).toMatchObject({ id: retryId, status: 'abandoned', write_id: null })
    expect(given.last_error).toContain(edited)
    const writes = (await call(owner, 'GET', '/dns-providers/writes')).body.data as any[]
    expect(writes.filter((w) => w.after?.values?.some((v: string) => v.includes(OTHER.ip)))).toEqual([])
    const alerts = await until(
      () => openAlerts(owner),
      (list) =>
        list.some(
          (a) => a.type === 'spf_provider_write_failing' && a.details.evidence.status === 'abandoned',
        ),
    )
    const alert = alerts.find((a) => a.type === 'spf_provider_write_failing')
    expect(alert.title).toContain('given up')
    expect(alert.details.evidence.error).toContain('not written over the newer record')
    expect(alert.details.remedy).toContain('Make the change again')
  }, 60_000)

  test('assisted: a second change builds on the waiting proposal; approving writes both', async () => {
    const first = await call(other, 'POST', `/domains/combine.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(first.body.data.provider).toMatchObject({ status: 'proposed' })
    const second = await call(other, 'POST', `/domains/combine.test/sources/${OTHER.ip}/add-to-spf`, {})
    expect(second.status).toBe(200)
    expect(second.body.data.provider).toMatchObject({
      status: 'proposed',
      diff: { added: [WITH_BOTH], removed: [OLD_SPF] },
    })
    const proposalId = second.body.data.provider.proposal_id as number
    const listed = await proposals(other, 'combine.test')
    expect(listed.filter((p) => p.status === 'proposed')).toHaveLength(1)
    expect(listed[0]).toMatchObject({
      id: proposalId,
      status: 'proposed',
      from_record: OLD_SPF,
      to_record: WITH_BOTH,
      diff: { added: [WITH_BOTH], removed: [OLD_SPF] },
    })
    expect(listed[0].reason).toContain(PARTNER.ip)
    expect(listed[0].reason).toContain(OTHER.ip)
    expect(listed.find((p) => p.id === first.body.data.provider.proposal_id).status).toBe('withdrawn')
    expect(await apexTxt('combine.test')).toEqual([OLD_SPF, SITE].sort())

    // The same change again is already in the waiting proposal.
    const again = await call(other, 'POST', `/domains/combine.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(again.body.data.provider).toMatchObject({ status: 'proposed', proposal_id: proposalId })

    const approved = await call(other, 'POST', `/domains/combine.test/spf/proposals/${proposalId}/approve`)
    expect(approved.status).toBe(200)
    expect(approved.body.data.write).toMatchObject({ status: 'verified' })
    expect(await apexTxt('combine.test')).toEqual([WITH_BOTH, SITE].sort())

    // Two changes at once: neither is lost, one proposal holds both.
    t.clock.now = new Date(t.clock.now.getTime() + 2_000) // past the old answer's 1 s TTL
    const both = await Promise.all(
      [THIRD, FOURTH].map((s) => call(other, 'POST', `/domains/combine.test/sources/${s.ip}/add-to-spf`, {})),
    )
    expect(both.map((r) => r.status)).toEqual([200, 200])
    const [waiting, ...rest] = (await proposals(other, 'combine.test')).filter((p) => p.status === 'proposed')
    expect(rest).toEqual([])
    expect(waiting.from_record).toBe(WITH_BOTH)
    expect(waiting.to_record).toContain(THIRD.ip)
    expect(waiting.to_record).toContain(FOURTH.ip)
  }, 60_000)
})
