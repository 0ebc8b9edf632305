import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { PgBoss } from 'pg-boss'
import { CHECK_DOMAIN, SCHEDULE_CHECKS, VERIFY_PENDING } from '../../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../../infrastructure/queue/pg-boss.ts'
import { startWorkers } from '../../../src/worker.ts'
import { type DnsTestServer, startDnsServer } from '../../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../../support/test-app.ts'

// The worker side of posture checks on a real pg-boss and a real DNS server.

let dns: DnsTestServer
let t: TestApp
let boss: PgBoss
let owner: TestAccount

beforeAll(async () => {
  dns = await startDnsServer({
    'jobs.example': [{ type: 'TXT', data: 'v=spf1 -all' }],
    '_dmarc.jobs.example': [{ type: 'TXT', data: 'v=DMARC1; p=quarantine' }],
  })
  // The tests poll the API while jobs run; the per-token limit is not what they test.
  t = await startTestApp({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
    RATE_LIMIT_API_PER_MINUTE: '100000',
  })
  owner = await t.account()
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'jobs.example' } })
  boss = await startBoss(t.db.database, { background: false })
  await startWorkers(boss, t.runtime)
}, 60_000)
afterAll(async () => {
  await boss.stop({ graceful: false })
  await t.close()
  await dns.stop()
})

async function until<T>(probe: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const value = await probe()
    if (value) return value
    await Bun.sleep(100)
  }
  throw new Error('condition not met in time')
}

test('the schedule enqueues due domains and the check job stores their posture', async () => {
  await boss.send(SCHEDULE_CHECKS.name, {})
  const domain = await until(async () => {
    const res = await t.request('GET', '/api/v1/domains/jobs.example', { token: owner.token })
    return res.body.data.status.checked_at ? res.body.data : null
  })
  expect(domain.dmarc_policy).toBe('quarantine')
  expect(domain.status.dmarc).toBe('warning')
  const queues = await boss.getQueues([CHECK_DOMAIN.name])
  expect(queues[0]?.policy).toBe('stately')
}, 30_000)

test('pending verifications are re-checked in the background', async () => {
  const domain = (await t.request('GET', '/api/v1/domains/jobs.example', { token: owner.token })).body.data
  dns.set(domain.verification.txt_name, 'TXT', [{ data: domain.verification.txt_value }])
  await boss.send(VERIFY_PENDING.name, {})
  const verified = await until(async () => {
    const res = await t.request('GET', '/api/v1/domains/jobs.example', { token: owner.token })
    return res.body.data.verified ? res.body.data : null
  })
  expect(verified.verified_at).not.toBeNull()
}, 30_000)
