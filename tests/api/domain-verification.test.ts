import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { VERIFY_PENDING } from '../../infrastructure/queue/catalogue.ts'
import { startWorkers } from '../../src/worker.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { ingestMessage, settledMessage } from '../support/report-world.ts'
import { reportXml } from '../support/source-reports.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'

// Ownership proven by the DMARC record (docs/api.md, "Verifying a domain"), against a real
// authoritative DNS server on loopback, and the reports that waited for it: quarantined as
// `domain_not_verified`, queued again by the verification and processed by the worker.

let dns: DnsTestServer
let t: TestApp
let owner: TestAccount
let stranger: TestAccount
let address: string
let strangerAddress: string

const DOMAINS = [
  'waiting.example',
  'ruf.example',
  'foreign.example',
  'mail.parent.example',
  'checked.example',
  'background.example',
  'swept.example',
]
const db = () => t.db.database.db
const today = () => Math.floor(Date.now() / 86_400_000) * 86_400

function reportMail(domain: string, id: string): string {
  const xml = reportXml(domain, 'receiver.example', id, today(), [{ ip: '192.0.2.1', count: 3 }])
  return multipart([
    attachment('application/gzip', `${id}.xml.gz`, Bun.gzipSync(new TextEncoder().encode(xml))),
  ])
}

async function verify(name: string) {
  const res = await t.request('POST', `/api/v1/domains/${name}/verify`, { token: owner.token })
  expect(res.status).toBe(200)
  return res.body.data
}

async function waitingRow(id: string) {
  const [row] = rowsOf<{ status: string; code: string | null; domain: string | null }>(
    await db().execute(
      sql`select status, quarantine_code as code, quarantine_domain as domain from ingest_messages where id = ${id}`,
    ),
  )
  return row!
}

beforeAll(async () => {
  dns = await startDnsServer({})
  t = await startTestApp(
    {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '300',
      INGEST_DOMAIN: 'in.dmarcwatch.test',
      RATE_LIMIT_API_PER_MINUTE: '10000',
    },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  stranger = await t.account()
  address = (await t.request('GET', '/api/v1/ingest/address', { token: owner.token })).body.data.address
  strangerAddress = (await t.request('GET', '/api/v1/ingest/address', { token: stranger.token })).body.data
    .address
  for (const name of DOMAINS) {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: name },
    })
    expect(res.status).toBe(201)
  }
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

describe('POST /domains/{name}/verify with the DMARC record', () => {
  test('a waiting report is processed once the rua names the report address', async () => {
    const held = await ingestMessage(t, owner.token, reportMail('waiting.example', 'held-1'))
    expect(held).toMatchObject({ status: 'quarantined', code: 'domain_not_verified' })
    expect((await waitingRow(held.id)).domain).toBe('waiting.example')

    // Not yet: no record, then a record that sends reports elsewhere.
    const none = await verify('waiting.example')
    expect(none).toMatchObject({ verified: false, proof: null, requeued: 0 })
    expect(none.message).toContain(`mailto:${address}`)
    dns.set('_dmarc.waiting.example', 'TXT', [{ data: 'v=DMARC1; p=none; rua=mailto:dmarc@waiting.example' }])
    const elsewhere = await verify('waiting.example')
    expect(elsewhere.verified).toBe(false)
    expect(elsewhere.message).toContain(`does not name ${address}`)

    // Several URIs, a size suffix (RFC 7489 §6.4) and upper case: still our address.
    dns.set('_dmarc.waiting.example', 'TXT', [
      { data: `v=DMARC1; p=none; rua=mailto:dmarc@waiting.example,mailto:${address.toUpperCase()}!10m` },
    ])
    const proven = await verify('waiting.example')
    expect(proven).toMatchObject({ verified: true, proof: 'dmarc_rua', requeued: 1 })
    expect(proven.domain.verified).toBe(true)
    expect(proven.message).toContain('1 report email')

    expect(await settledMessage(t, held.id)).toEqual({ status: 'processed', code: null })
    const reports = await t.request('GET', '/api/v1/domains/waiting.example/reports', { token: owner.token })
    expect(reports.body.data.map((r: { report_id: string }) => r.report_id)).toEqual(['held-1'])

    const again = await verify('waiting.example')
    expect(again).toMatchObject({ verified: true, proof: 'dmarc_rua', requeued: 0 })
    const events = rowsOf<{ n: number }>(
      await db().execute(
        sql`select count(*)::int as n from events where account_id = ${owner.accountId} and type = 'domain.verified' and data->>'domain' = 'waiting.example'`,
      ),
    )
    expect(events[0]!.n).toBe(1)
  }, 30_000)

  test('ruf counts too, and so does a +tag sub-address of the report address', async () => {
    const [local, host] = address.split('@')
    dns.set('_dmarc.ruf.example', 'TXT', [
      { data: `v=DMARC1; p=none; rua=mailto:dmarc@ruf.example; ruf=mailto:${local}+failures@${host}` },
    ])
    expect(await verify('ruf.example')).toMatchObject({ verified: true, proof: 'dmarc_ruf' })
  })

  test("another account's report address proves nothing for this one", async () => {
    dns.set('_dmarc.foreign.example', 'TXT', [{ data: `v=DMARC1; p=reject; rua=mailto:${strangerAddress}` }])
    expect(await verify('foreign.example')).toMatchObject({ verified: false, proof: null })
  })

  test("a subdomain is proven by its organizational domain's record", async () => {
    dns.set('_dmarc.parent.example', 'TXT', [{ data: `v=DMARC1; p=none; rua=mailto:${address}` }])
    expect(await verify('mail.parent.example')).toMatchObject({ verified: true, proof: 'dmarc_rua' })
  })

  test('the TXT record still works and says so', async () => {
    const domain = (await t.request('GET', '/api/v1/domains/foreign.example', { token: owner.token })).body
      .data
    dns.set(domain.verification.txt_name, 'TXT', [{ data: domain.verification.txt_value }])
    expect(await verify('foreign.example')).toMatchObject({ verified: true, proof: 'dns_txt' })
  })
})

describe('verification without asking', () => {
  test('a posture check that reads a rua naming the report address verifies the domain', async () => {
    dns.set('_dmarc.checked.example', 'TXT', [{ data: `v=DMARC1; p=none; rua=mailto:${address}` }])
    const status = await t.request('GET', '/api/v1/domains/checked.example/status?refresh=1', {
      token: owner.token,
    })
    expect(status.status).toBe(200)
    const domain = await t.request('GET', '/api/v1/domains/checked.example', { token: owner.token })
    expect(domain.body.data.verified).toBe(true)
  })

  test('the periodic re-verification finds the rua, and its sweep re-queues what still waits', async () => {
    const held = await ingestMessage(t, owner.token, reportMail('background.example', 'held-2'))
    expect(held.code).toBe('domain_not_verified')
    dns.set('_dmarc.background.example', 'TXT', [{ data: `v=DMARC1; p=none; rua=mailto:${address}` }])
    await t.runtime.boss!.send(VERIFY_PENDING.name, {})
    expect(
      (
        await until(
          () => waitingRow(held.id),
          (row) => row.status === 'processed',
        )
      ).code,
    ).toBeNull()

    // Verified behind the service's back (an operator's UPDATE): the sweep still finds the waiting one.
    const stuck = await ingestMessage(t, owner.token, reportMail('swept.example', 'held-3'))
    expect(stuck.code).toBe('domain_not_verified')
    await db().execute(sql`update domains set verified_at = now() where name = 'swept.example'`)
    await t.runtime.boss!.send(VERIFY_PENDING.name, {})
    expect(
      (
        await until(
          () => waitingRow(stuck.id),
          (row) => row.status === 'processed',
        )
      ).code,
    ).toBeNull()
  }, 40_000)
})
