import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { CHECK_DOMAIN } from '../../infrastructure/queue/catalogue.ts'
import { startWorkers } from '../../src/worker.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { type SourceDay, seedReportDays } from './dmarc-world.ts'

// add-to-spf for a domain whose zone is on a connected DNS provider (issue #19, part 2), against a
// real PowerDNS: at `automatic` the SPF record with the new source is written through the PowerDNS
// API (other TXT values at the apex kept), read back from the provider and over DNS, audited; the
// next posture check reads it over DNS; the write's rollback restores the previous record. At
// `assisted` the change is a proposal showing the diff and nothing is written; at `manual` the
// answer is the record to publish, as without a provider.

const OLD_SPF = 'v=spf1 ip4:192.0.2.10 -all'
const SITE = 'site-verification=abc123'
const PARTNER: SourceDay = { ip: '198.51.100.7', messages: 100, pass: 0 }
const OTHER: SourceDay = { ip: '203.0.113.9', messages: 100, pass: 0 }

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
const automation = (level: string) => call('PATCH', '/domains/spf.test', { automation_level: level })

describe('add-to-spf through a connected PowerDNS', () => {
  beforeAll(async () => {
    pdns = await startPowerDns(['spf.test'])
    // TTL 1: the posture check's caching resolver does not keep the old record past the write.
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

  test('manual: the record to publish, nothing written', async () => {
    expect((await automation('manual')).status).toBe(200)
    const res = await call('POST', `/domains/spf.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ changed: true, managed: false, provider: null })
    expect(res.body.data.publish.record).toBe('v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all')
    expect(await apexTxt()).toEqual([OLD_SPF, SITE].sort())
  })

  test('assisted: a proposal with the diff, nothing written', async () => {
    expect((await automation('assisted')).status).toBe(200)
    const res = await call('POST', `/domains/spf.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(res.status).toBe(200)
    expect(res.body.data.provider).toMatchObject({
      status: 'proposed',
      write_id: null,
      diff: { added: ['v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all'], removed: [OLD_SPF] },
    })
    expect(res.body.data.provider.after.sort()).toEqual(
      ['v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all', SITE].sort(),
    )
    expect(await apexTxt()).toEqual([OLD_SPF, SITE].sort())
  })

  test('automatic: written through PowerDNS, read over DNS by the posture check, rolled back', async () => {
    expect((await postureSpf()).record).toBe(OLD_SPF)
    expect((await automation('automatic')).status).toBe(200)
    const res = await call('POST', `/domains/spf.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(res.status).toBe(200)
    const written = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all'
    expect(res.body.data.provider).toMatchObject({ status: 'written', verified: true, error: null })
    expect(await apexTxt()).toEqual([written, SITE].sort())
    const writeId = res.body.data.provider.write_id as string
    const write = (await call('GET', `/dns-providers/writes/${writeId}`)).body.data
    expect(write).toMatchObject({ status: 'verified', name: 'spf.test', type: 'TXT' })
    expect(write.actor).toStartWith('user:')
    expect((await postureSpf()).record).toBe(written)

    // The same source again: the provider already holds it, nothing is written.
    const again = await call('POST', `/domains/spf.test/sources/${PARTNER.ip}/add-to-spf`, {})
    expect(again.body.data).toMatchObject({ changed: false, provider: null })

    const rolled = await call('POST', `/dns-providers/writes/${writeId}/rollback`)
    expect(rolled.status).toBe(200)
    expect(rolled.body.data.status).toBe('rolled_back')
    expect(await apexTxt()).toEqual([OLD_SPF, SITE].sort())
    expect((await postureSpf()).record).toBe(OLD_SPF)
  }, 30_000)

  test('automatic: activating SPF management writes the record including the hosted one', async () => {
    const res = await call('POST', '/domains/spf.test/spf/activate', {})
    expect(res.status).toBe(200)
    const include = res.body.data.management.include as string
    expect(include).toStartWith('include:')
    expect(res.body.data.provider).toMatchObject({ status: 'written', verified: true })
    const spf = (await apexTxt()).find((v) => v.startsWith('v=spf1'))!
    expect(spf).toContain(include)
    expect(await apexTxt()).toContain(SITE)
    // The write is the provider write path's: rolled back like any other.
    const rolled = await call('POST', `/dns-providers/writes/${res.body.data.provider.write_id}/rollback`)
    expect(rolled.body.data.status).toBe('rolled_back')
    expect(await apexTxt()).toEqual([OLD_SPF, SITE].sort())
  }, 30_000)
})
