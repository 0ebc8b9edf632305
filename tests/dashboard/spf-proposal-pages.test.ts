import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { seedReportDays } from '../api/dmarc-world.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// The SPF page of an `assisted` domain whose zone is on a real PowerDNS (issue #19, part 2): adding
// a source stores a proposal, shown with its diff and approve/reject forms (CSRF-checked); approving
// writes it through PowerDNS, and the page then shows the write; rejecting discards one.

const OLD_SPF = 'v=spf1 ip4:192.0.2.10 -all'
const PARTNER = { ip: '198.51.100.7', messages: 100, pass: 0 }
const OTHER = { ip: '203.0.113.9', messages: 100, pass: 0 }
const WITH_PARTNER = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all'
const email = `spf-proposals-${Math.random().toString(36).slice(2, 8)}@example.com`

let pdns: PowerDnsServer
let t: TestApp
let client: FormClient
let token: string

const apexSpf = async () => {
  const answer = await t.runtime.verificationDns.resolve('spf.test', 'TXT')
  if (answer.status !== 'ok') return []
  return answer.records
    .map((r) => (r.type === 'TXT' ? r.strings.join('') : ''))
    .filter((v) => v.startsWith('v=spf1'))
}
const proposalId = (html: string) =>
  Number(/action="\/domains\/spf\.test\/spf\/proposals\/(\d+)\/approve"/.exec(html)![1])

beforeAll(async () => {
  pdns = await startPowerDns(['spf.test'])
  await pdns.pdnsutil('add-record', 'spf.test', '@', 'TXT', '1', `"${OLD_SPF}"`)
  t = await startTestApp(
    { WEBHOOK_ALLOW_PRIVATE: '1', DNS_SERVERS: `127.0.0.1:${pdns.dnsPort}`, DNS_TIMEOUT_MS: '1000' },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  client = formClient(t)
  await client.signUp(email)
  token = await t.tokenFor(email)
  const call = (method: string, path: string, body?: unknown) =>
    t.request(method, `/api/v1${path}`, { token, body })
  const connected = await call('POST', '/dns-providers/authenticate', {
    provider: 'powerdns',
    credentials: { base_url: pdns.apiUrl, api_key: pdns.apiKey },
  })
  expect(connected.status).toBe(201)
  const started = await call('POST', '/dns-providers/powerdns/import-domains', { zones: ['spf.test'] })
  await until(
    () => call('GET', `/dns-providers/imports/${started.body.data.id}`).then((r) => r.body.data),
    (i) => i.status === 'done' || i.status === 'failed',
  )
  const row = rowsOf<{ id: string; account_id: string }>(
    await t.db.database.db.execute(sql`select id, account_id from domains where name = 'spf.test'`),
  )[0]!
  await seedReportDays(
    t.db.database.db,
    t.clock.now,
    row.account_id,
    Number(row.id),
    [3, 1],
    [PARTNER, OTHER],
  )
  expect((await call('PATCH', '/domains/spf.test', { automation_level: 'assisted' })).status).toBe(200)
}, 60_000)
afterAll(async () => {
  await t?.close()
  await pdns?.stop()
}, 30_000)

describe('SPF page: proposals through a connected PowerDNS', () => {
  test('a proposal with its diff, approved by a CSRF-checked form, written through PowerDNS', async () => {
    const added = await client.submit(
      '/domains/spf.test/spf',
      { source: PARTNER.ip },
      '/domains/spf.test/spf/sources',
    )
    expect(added.status).toBe(303)
    expect(added.location).toContain('done=proposed')
    const page = await client.get(added.location!.replace(/#.*$/, ''))
    expect(page.status).toBe(200)
    expect(page.html).toContain('The change is waiting for your approval below')
    expect(page.html).toContain('<h2 id="provider">Through your DNS provider</h2>')
    expect(page.html).toContain(`<del>− <code class="value">${OLD_SPF}</code></del>`)
    expect(page.html).toContain(`<ins>+ <code class="value">${WITH_PARTNER}</code></ins>`)
    const id = proposalId(page.html)
    expect(await apexSpf()).toEqual([OLD_SPF])

    // Without the CSRF token: refused, nothing written.
    const forged = await client.post(`/domains/spf.test/spf/proposals/${id}/approve`, {})
    expect(forged.status).toBe(403)
    expect(await apexSpf()).toEqual([OLD_SPF])

    const approved = await client.post(`/domains/spf.test/spf/proposals/${id}/approve`, {
      _csrf: csrfOf(page.html),
    })
    expect(approved.status).toBe(303)
    expect(approved.location).toContain('done=approved')
    expect(await apexSpf()).toEqual([WITH_PARTNER])
    const after = await client.get('/domains/spf.test/spf?done=approved')
    expect(after.html).toContain('Approved: the SPF record was written through your DNS provider.')
    expect(after.html).toContain('<h3>Written through the provider</h3>')
    expect(after.html).toContain('<span class="badge ok">verified</span>')
    expect(after.html).toContain('No change is waiting for approval.')
  }, 40_000)

  test('rejecting discards the proposal', async () => {
    // The app's DNS cache still answers the record published before the approval (its 1 s TTL runs
    // on the test clock): a change computed from it would drop the approved source, so it is
    // neither proposed nor written.
    const early = await client.submit(
      '/domains/spf.test/spf',
      { source: OTHER.ip },
      '/domains/spf.test/spf/sources',
    )
    expect(early.location).toContain('done=provider-behind')
    expect(await apexSpf()).toEqual([WITH_PARTNER])
    t.clock.now = new Date(t.clock.now.getTime() + 2_000)
    const added = await client.submit(
      '/domains/spf.test/spf',
      { source: OTHER.ip },
      '/domains/spf.test/spf/sources',
    )
    expect(added.location).toContain('done=proposed')
    const page = await client.get('/domains/spf.test/spf')
    const id = proposalId(page.html)
    const rejected = await client.post(`/domains/spf.test/spf/proposals/${id}/reject`, {
      _csrf: csrfOf(page.html),
    })
    expect(rejected.status).toBe(303)
    expect(rejected.location).toContain('done=rejected')
    const after = await client.get('/domains/spf.test/spf?done=rejected')
    expect(after.html).toContain('Proposal rejected: nothing was written.')
    expect(after.html).toContain('No change is waiting for approval.')
    expect(await apexSpf()).toEqual([WITH_PARTNER])
  }, 40_000)

  test('automatic: adding a source writes it through PowerDNS and the page shows the write', async () => {
    const patched = await t.request('PATCH', '/api/v1/domains/spf.test', {
      token,
      body: { automation_level: 'automatic' },
    })
    expect(patched.status).toBe(200)
    const added = await client.submit(
      '/domains/spf.test/spf',
      { source: OTHER.ip },
      '/domains/spf.test/spf/sources',
    )
    expect(added.status).toBe(303)
    expect(added.location).toContain('done=written')
    const written = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 ip4:203.0.113.9 -all'
    expect(await apexSpf()).toEqual([written])
    const page = await client.get('/domains/spf.test/spf?done=written')
    expect(page.html).toContain('The SPF record was written through your DNS provider and read back.')
    expect(page.html).toContain(`<ins>+ <code class="value">${written}</code></ins>`)
    expect(page.html).toContain('No change is waiting for approval.')
  }, 40_000)
})
