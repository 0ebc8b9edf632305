import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { CHECK_DOMAIN } from '../../infrastructure/queue/catalogue.ts'
import { startWorkers } from '../../src/worker.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { type SourceDay, seedReportDays } from './dmarc-world.ts'

// SPF proposals of an `assisted` domain whose zone is on a connected DNS provider (issue #19,
// part 2), against a real PowerDNS: add-to-spf stores a proposal with its diff and writes nothing;
// it is listed; approving writes it through the PowerDNS API (other TXT values kept), reads it back
// from the provider and over DNS, and the next posture check sees it; a proposal whose live record
// changed since is refused with 409 `proposal_stale`; rejecting discards one; a provider that
// cannot be read (the server stopped) raises `dns_provider_read_failing` and writes nothing.

const OLD_SPF = 'v=spf1 ip4:192.0.2.10 -all'
const SITE = 'site-verification=abc123'
const PARTNER: SourceDay = { ip: '198.51.100.7', messages: 100, pass: 0 }
const OTHER: SourceDay = { ip: '203.0.113.9', messages: 100, pass: 0 }
const WITH_PARTNER = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all'

let pdns: PowerDnsServer
let t: TestApp
let owner: TestAccount

const call = (method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: owner.token, body })
const apexTxt = async () => {
  const answer = await t.runtime.verificationDns.resolve('spf.test', 'TXT')
  if (answer.status !== 'ok') return []
  return answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : '')).sort()
}
const proposals = async () => (await call('GET', '/domains/spf.test/spf/proposals')).body.data.proposals

describe('SPF proposals through a connected PowerDNS (assisted)', () => {
  beforeAll(async () => {
    pdns = await startPowerDns(['spf.test'])
    await pdns.pdnsutil('add-record', 'spf.test', '@', 'TXT', '1', `"${OLD_SPF}"`)
    await pdns.pdnsutil('add-record', 'spf.test', '@', 'TXT', '1', `"${SITE}"`)
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
    const connected = await call('POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: pdns.apiUrl, api_key: pdns.apiKey },
    })
    expect(connected.status).toBe(201)
    const started = await call('POST', '/dns-providers/powerdns/import-domains', { zones: ['spf.test'] })
    const done = await until(
      () => call('GET', `/dns-providers/imports/${started.body.data.id}`).then((r) => r.body.data),
      (i) => i.status === 'done' || i.status === 'failed',
    )
    expect(done.results[0]).toMatchObject({ domain: 'spf.test', status: 'imported', verified: true })
    const id = rowsOf<{ id: string }>(
      await t.db.database.db.execute(
        sql`select id from domains where account_id = ${owner.accountId} and name = 'spf.test'`,
      ),
    )[0]!.id
    await seedReportDays(t.db.database.db, t.clock.now, owner.accountId, Number(id), [3, 1], [PARTNER, OTHER])
    expect((await call('PATCH', '/domains/spf.test', { automation_level: 'assisted' })).status).toBe(200)
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    await pdns?.stop()
  })

  const postureSpf = async () => {
    t.clock.now = new Date(t.clock.now.getTime() + 2_000) // past the old answer's 1 s TTL
    const boss = t.runtime.boss!
    const id = await boss.send(CHECK_DOMAIN.name, { accountId: owner.accountId, name: 'spf.test' })
    await until(
      () => boss.getJobById(CHECK_DOMAIN.name, id!),
      (job) => job?.state === 'completed',
    )
    return (await call('GET', '/domains/spf.test/status')).body.data.spf
  }

  test('a proposal is stored with its diff, listed, and approving writes it through PowerDNS', async () => {
    const res = await call('POST', `/domains/spf.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(res.status).toBe(200)
    expect(res.body.data.provider).toMatchObject({ status: 'proposed', write_id: null })
    const proposalId = res.body.data.provider.proposal_id as number
    expect(proposalId).toBeGreaterThan(0)
    expect(await apexTxt()).toEqual([OLD_SPF, SITE].sort())

    const [listed] = await proposals()
    expect(listed).toMatchObject({
      id: proposalId,
      status: 'proposed',
      from_record: OLD_SPF,
      to_record: WITH_PARTNER,
      diff: { added: [WITH_PARTNER], removed: [OLD_SPF] },
      write_id: null,
    })
    expect(listed.after.sort()).toEqual([WITH_PARTNER, SITE].sort())

    const approved = await call('POST', `/domains/spf.test/spf/proposals/${proposalId}/approve`)
    expect(approved.status).toBe(200)
    expect(approved.body.data.proposal).toMatchObject({ status: 'applied', decided_by: expect.any(String) })
    expect(approved.body.data.write).toMatchObject({ status: 'verified', name: 'spf.test', type: 'TXT' })
    expect(approved.body.data.proposal.write_id).toBe(approved.body.data.write.id)
    expect(await apexTxt()).toEqual([WITH_PARTNER, SITE].sort())
    expect((await postureSpf()).record).toBe(WITH_PARTNER)
    const write = (await call('GET', `/dns-providers/writes/${approved.body.data.write.id}`)).body.data
    expect(write.actor).toStartWith('user:')

    // Decided: approving again is refused.
    const again = await call('POST', `/domains/spf.test/spf/proposals/${proposalId}/approve`)
    expect(again.status).toBe(400)
    expect(again.body.errors.id).toBeDefined()
  }, 30_000)

  test('a proposal whose live record changed since is refused with 409 proposal_stale', async () => {
    const res = await call('POST', `/domains/spf.test/sources/${OTHER.ip}/add-to-spf`, {})
    const proposalId = res.body.data.provider.proposal_id as number
    // Someone edits the record at the provider meanwhile.
    const edited = 'v=spf1 ip4:192.0.2.99 -all'
    await pdns.pdnsutil('replace-rrset', 'spf.test', '@', 'TXT', '1', `"${edited}"`, `"${SITE}"`)
    const approved = await call('POST', `/domains/spf.test/spf/proposals/${proposalId}/approve`)
    expect(approved.status).toBe(409)
    expect(approved.body.error).toBe('proposal_stale')
    expect(approved.body.message).toContain(edited)
    expect((await proposals()).find((p: any) => p.id === proposalId).status).toBe('withdrawn')
    // Nothing was written over the newer record.
    const held = await call('GET', '/dns-providers/writes')
    expect(
      held.body.data.filter((w: any) => w.after?.values?.some((v: string) => v.includes(OTHER.ip))),
    ).toEqual([])
    await pdns.pdnsutil('replace-rrset', 'spf.test', '@', 'TXT', '1', `"${WITH_PARTNER}"`, `"${SITE}"`)
  }, 30_000)

  test('rejecting discards the proposal; nothing is written', async () => {
    const res = await call('POST', `/domains/spf.test/sources/${OTHER.ip}/add-to-spf`, {})
    const proposalId = res.body.data.provider.proposal_id as number
    const rejected = await call('POST', `/domains/spf.test/spf/proposals/${proposalId}/reject`)
    expect(rejected.status).toBe(200)
    expect(rejected.body.data.proposal).toMatchObject({ id: proposalId, status: 'rejected' })
    expect((await call('POST', `/domains/spf.test/spf/proposals/${proposalId}/approve`)).status).toBe(400)
    expect((await call('POST', '/domains/spf.test/spf/proposals/999999/reject')).status).toBe(404)
    const spf = (await apexTxt()).filter((v) => v.startsWith('v=spf1'))
    expect(spf).toEqual([WITH_PARTNER])
  }, 30_000)

  test('a provider that cannot be read raises dns_provider_read_failing; nothing is written', async () => {
    const res = await call('POST', `/domains/spf.test/sources/${OTHER.ip}/add-to-spf`, {})
    const proposalId = res.body.data.provider.proposal_id as number
    await pdns.stop()
    const approved = await call('POST', `/domains/spf.test/spf/proposals/${proposalId}/approve`)
    expect(approved.status).toBe(502)
    expect(approved.body).toMatchObject({ error: 'dns_provider_error', provider: 'powerdns' })
    // The proposal keeps waiting for a provider that answers again.
    expect((await proposals()).find((p: any) => p.id === proposalId).status).toBe('proposed')
    // The failed read asked for the account's operations alerts at once.
    const alerts = await until(
      () => call('GET', '/alerts?status=open').then((r) => r.body.data as any[]),
      (list) => list.some((a) => a.type === 'dns_provider_read_failing'),
    )
    const alert = alerts.find((a) => a.type === 'dns_provider_read_failing')
    expect(alert).toMatchObject({ severity: 'high' })
    expect(alert.details.remedy).toContain('POST /dns-providers/authenticate')
    expect(alert.details.evidence.provider).toBe('powerdns')
  }, 40_000)
})
