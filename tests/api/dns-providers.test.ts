import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { windowAt } from '../../domain/rate-limits/fixed-window.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { IMPORT_DOMAINS } from '../../infrastructure/queue/catalogue.ts'
import { pgRateLimitCounter } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { startWorkers } from '../../src/worker.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'

// DNS provider connections, domain import and writes end to end, against a real PowerDNS
// (tests/support/powerdns.ts): the app's resolvers ask its DNS port, so read-backs and ownership
// verification go over real DNS; WEBHOOK_ALLOW_PRIVATE=1 lets the connection reach its loopback API.
// The workers run in-process, so the import is the real pg-boss job.

const ZONES = ['acme.test', 'old.test', 'shop.test']
let pdns: PowerDnsServer
let t: TestApp
let owner: TestAccount
let stranger: TestAccount
let connectionId: string

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: account.token, body })
const txtOverDns = async (name: string) => {
  const answer = await t.runtime.verificationDns.resolve(name, 'TXT')
  return answer.status === 'ok' ? answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : '')) : []
}
const audit = async (accountId: string) =>
  rowsOf<{ action: string; actor: string }>(
    await t.db.database.db.execute(
      sql`select action, actor from audit_log where account_id = ${accountId} and action like 'dns_provider.%' order by id`,
    ),
  )
const write = (body: Record<string, unknown>, account = owner) =>
  call(account, 'POST', '/dns-providers/writes', { domain: 'acme.test', type: 'TXT', ...body })

describe('DNS providers against PowerDNS', () => {
  beforeAll(async () => {
    pdns = await startPowerDns(ZONES)
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
    stranger = await t.account()
    // Already in the account (unverified): the import skips it.
    await call(owner, 'POST', '/domains', { domain_name: 'old.test' })
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    await pdns?.stop()
  })

  const credentials = () => ({ base_url: pdns.apiUrl, api_key: pdns.apiKey })

  test('a wrong key is the documented 400 dns_provider_authentication_failed; nothing is stored', async () => {
    const bad = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { ...credentials(), api_key: 'wrong' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ error: 'dns_provider_authentication_failed', provider: 'powerdns' })
    const missing = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: 'ftp://127.0.0.1/' },
    })
    expect(missing.status).toBe(400)
    expect(Object.keys(missing.body.errors)).toEqual(['credentials.api_key'])
    const scheme = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: 'ftp://127.0.0.1/', api_key: 'x' },
    })
    expect(scheme.body.errors['credentials.base_url'][0]).toContain('https')
    // Named by its scheme, not by its origin ("null" for a file: URL).
    const file = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: 'file:///etc/passwd', api_key: 'x' },
    })
    expect(file.body.errors['credentials.base_url']).toEqual(['the URL must use https, not file'])
    const portZero = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: 'http://127.0.0.1:0/', api_key: 'x' },
    })
    expect(portZero.status).toBe(400)
    expect(portZero.body.errors['credentials.base_url']).toEqual(['the URL must not use port 0'])
    const unreachable = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: 'http://127.0.0.1:1', api_key: 'x' },
    })
    expect(unreachable.status).toBe(502)
    expect(unreachable.body).toMatchObject({
      error: 'dns_provider_error',
      provider: 'powerdns',
      kind: 'unavailable',
    })
    expect((await call(owner, 'GET', '/dns-providers')).body.meta.total).toBe(0)
  })

  test('good credentials are stored; the list never shows the key', async () => {
    const created = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: credentials(),
      name: 'Lab PowerDNS',
    })
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({
      provider: 'powerdns',
      name: 'Lab PowerDNS',
      settings: { base_url: pdns.apiUrl, server_id: 'localhost' },
    })
    connectionId = created.body.data.id
    const listed = await call(owner, 'GET', '/dns-providers')
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([connectionId])
    for (const body of [created.body, listed.body]) expect(JSON.stringify(body)).not.toContain(pdns.apiKey)
  })

  test('RFC 2136 with a TSIG key; with two connections of a kind, the path needs the id', async () => {
    const rfc2136 = (key: { name: string; secret: string }) =>
      call(owner, 'POST', '/dns-providers/authenticate', {
        provider: 'rfc2136',
        credentials: {
          server: `127.0.0.1:${pdns.dnsPort}`,
          zones: ['acme.test'],
          key_name: key.name,
          key_secret: key.secret,
        },
      })
    const refused = await rfc2136(pdns.otherKey)
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ error: 'dns_provider_authentication_failed', provider: 'rfc2136' })
    const tsig = await rfc2136(pdns.key)
    expect(tsig.status).toBe(201)
    expect(tsig.body.data.settings).toMatchObject({
      zones: ['acme.test'],
      key_name: pdns.key.name,
      key_algorithm: 'hmac-sha256',
    })
    expect(JSON.stringify(tsig.body)).not.toContain(pdns.key.secret)

    const again = await call(owner, 'POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: credentials(),
    })
    const ambiguous = await call(owner, 'POST', '/dns-providers/powerdns/import-domains')
    expect(ambiguous.status).toBe(400)
    expect(ambiguous.body.errors.provider[0]).toContain('2 powerdns connections')
    for (const id of [tsig.body.data.id, again.body.data.id])
      expect((await call(owner, 'DELETE', `/dns-providers/${id}`)).status).toBe(204)
  })

  test('another account sees nothing and reaches nothing', async () => {
    expect((await call(stranger, 'GET', '/dns-providers')).body.data).toEqual([])
    for (const provider of [connectionId, 'powerdns']) {
      const imported = await call(stranger, 'POST', `/dns-providers/${provider}/import-domains`)
      expect(imported.status).toBe(404)
      expect(imported.body.error).toBe('not_found')
    }
    expect((await call(stranger, 'DELETE', `/dns-providers/${connectionId}`)).status).toBe(404)
  })

  test('import: every zone becomes a domain, verified through the record the service writes itself', async () => {
    // Nine of the minute's ten DNS writes are used: the import writes one verification record,
    // pauses at the DNS write limit, and goes on in the next minute.
    const counter = pgRateLimitCounter(t.db.database.db)
    for (let i = 0; i < 9; i++) await counter.hit(`dns_writes:${owner.accountId}`, windowAt(t.clock.now, 60))
    const started = await call(owner, 'POST', '/dns-providers/powerdns/import-domains')
    expect(started.status).toBe(202)
    expect(started.body.data).toMatchObject({ status: 'queued', connection_id: connectionId, zones: null })
    const id = started.body.data.id
    expect((await call(stranger, 'GET', `/dns-providers/imports/${id}`)).status).toBe(404)

    const progress = () => call(owner, 'GET', `/dns-providers/imports/${id}`).then((r) => r.body.data)
    const paused = await until(progress, (i) => i.counts.imported === 1 && i.counts.skipped === 1)
    expect(paused).toMatchObject({ status: 'running', total: 3, counts: { pending: 1 }, finished_at: null })
    const [next] = await until(
      () => t.runtime.boss!.findJobs(IMPORT_DOMAINS.name, { data: { importId: id }, queued: true }),
      (jobs) => jobs.length === 1,
    )
    expect(next!.startAfter.getTime()).toBeGreaterThan(Date.now())
    t.clock.now = new Date(Math.ceil(t.clock.now.getTime() / 60_000) * 60_000 + 1_000)
    await t.runtime.boss!.update(IMPORT_DOMAINS.name, undefined, { id: next!.id, startAfter: new Date() })

    const done = await until(progress, (i) => i.status === 'done' || i.status === 'failed')
    expect(done).toMatchObject({
      status: 'done',
      total: 3,
      counts: { imported: 2, skipped: 1, failed: 0, pending: 0 },
    })
    expect(done.results).toEqual([
      { zone: 'acme.test', domain: 'acme.test', status: 'imported', reason: null, verified: true },
      { zone: 'old.test', domain: 'old.test', status: 'skipped', reason: 'exists', verified: false },
      { zone: 'shop.test', domain: 'shop.test', status: 'imported', reason: null, verified: true },
    ])
    const acme = (await call(owner, 'GET', '/domains/acme.test')).body.data
    expect(acme.verified).toBe(true)
    expect(await txtOverDns(acme.verification.txt_name)).toEqual([acme.verification.txt_value])
    expect((await call(owner, 'GET', '/domains/old.test')).body.data.verified).toBe(false)
    expect((await audit(owner.accountId)).map((r) => r.actor)).toEqual(['system', 'system'])
  }, 40_000)

  test('a write: the dry run shows the diff, the write is read back over DNS, audited and rolled back', async () => {
    const dry = await write({ name: '_dmarc.acme.test', values: ['v=DMARC1; p=none'], dry_run: true })
    expect(dry.status).toBe(200)
    expect(dry.body.data).toMatchObject({
      id: null,
      dry_run: true,
      status: 'planned',
      zone: 'acme.test',
      before: null,
      diff: { added: ['v=DMARC1; p=none'], removed: [] },
    })
    expect(await txtOverDns('_dmarc.acme.test')).toEqual([])

    const first = await write({ name: '_dmarc.acme.test', values: ['v=DMARC1; p=none'] })
    expect(first.body.data).toMatchObject({ status: 'verified', dry_run: false, changed: true, error: null })
    expect(await txtOverDns('_dmarc.acme.test')).toEqual(['v=DMARC1; p=none'])
    const second = await write({ name: '_dmarc.acme.test', values: ['v=DMARC1; p=quarantine'], ttl: 300 })
    expect(second.body.data).toMatchObject({
      status: 'verified',
      before: { values: ['v=DMARC1; p=none'], ttl: 3600 },
      diff: {
        added: ['v=DMARC1; p=quarantine'],
        removed: ['v=DMARC1; p=none'],
        ttl: { before: 3600, after: 300 },
      },
    })
    const same = await write({ name: '_dmarc.acme.test', values: ['v=DMARC1; p=quarantine'], ttl: 300 })
    expect(same.body.data).toMatchObject({ id: null, status: 'unchanged', changed: false })

    const back = await call(owner, 'POST', `/dns-providers/writes/${second.body.data.id}/rollback`)
    expect(back.body.data).toMatchObject({ status: 'rolled_back', error: null })
    expect(await txtOverDns('_dmarc.acme.test')).toEqual(['v=DMARC1; p=none'])
    expect((await call(owner, 'POST', `/dns-providers/writes/${second.body.data.id}/rollback`)).status).toBe(
      400,
    )
    await call(owner, 'POST', `/dns-providers/writes/${first.body.data.id}/rollback`)
    expect(await txtOverDns('_dmarc.acme.test')).toEqual([])

    expect((await audit(owner.accountId)).slice(2).map((r) => r.action)).toEqual([
      'dns_provider.write',
      'dns_provider.write',
      'dns_provider.rollback',
      'dns_provider.rollback',
    ])
    const log = await call(owner, 'GET', '/dns-providers/writes')
    expect(log.body.meta.total).toBe(4) // two imports' verification records, two writes
    expect((await call(owner, 'GET', `/dns-providers/writes/${first.body.data.id}`)).body.data.status).toBe(
      'rolled_back',
    )
  })

  test('writes act on the caller’s verified domains only, and names under the domain', async () => {
    const unverified = await call(owner, 'POST', '/dns-providers/writes', {
      domain: 'old.test',
      name: 'old.test',
      type: 'TXT',
      values: ['x'],
    })
    expect(unverified.status).toBe(403)
    expect(unverified.body.error).toBe('forbidden')
    const outside = await write({ name: 'shop.test', values: ['x'] })
    expect(outside.status).toBe(400)
    expect(Object.keys(outside.body.errors)).toEqual(['name'])
    // Each problem on its own field: a name that is no domain name was reported on `values`.
    const notAName = await write({ name: 'a"b.acme.test', values: ['x'] })
    expect(notAName.status).toBe(400)
    expect(notAName.body.errors).toEqual({ name: ['"a"b.acme.test" is not a domain name'] })
    const badValue = await write({ name: 'v.acme.test', type: 'A', values: ['not-an-address'] })
    expect(badValue.status).toBe(400)
    expect(Object.keys(badValue.body.errors)).toEqual(['values'])
    const theirs = await write({ name: 'acme.test', values: ['x'] }, stranger)
    expect(theirs.status).toBe(403)
    expect(theirs.body.error).toBe('domain_not_found')
    const [latest] = (await call(owner, 'GET', '/dns-providers/writes')).body.data
    expect((await call(stranger, 'GET', `/dns-providers/writes/${latest.id}`)).status).toBe(404)
    expect((await call(stranger, 'POST', `/dns-providers/writes/${latest.id}/rollback`)).status).toBe(404)
    expect((await call(stranger, 'GET', '/dns-providers/writes')).body.data).toEqual([])
  })

  test('the 11th DNS write in a minute is refused with 429', async () => {
    // A fresh calendar minute, so earlier writes do not count.
    const minute = Math.ceil(t.clock.now.getTime() / 60_000) * 60_000
    t.clock.now = new Date(minute + 1_000)
    for (let i = 1; i <= 10; i++) {
      const ok = await write({ name: 'rate.acme.test', values: [`n=${i}`] })
      expect(ok.status).toBe(200)
    }
    const refused = await write({ name: 'rate.acme.test', values: ['n=11'] })
    expect(refused.status).toBe(429)
    expect(refused.body.retry_after).toBeGreaterThan(0)
    // A dry run writes nothing and is not limited.
    expect((await write({ name: 'rate.acme.test', values: ['n=12'], dry_run: true })).status).toBe(200)
  }, 30_000)

  test('deleting the connection forgets it; its writes stay in the log', async () => {
    expect((await call(owner, 'DELETE', `/dns-providers/${connectionId}`)).status).toBe(204)
    expect((await call(owner, 'GET', '/dns-providers')).body.data).toEqual([])
    expect((await call(owner, 'DELETE', `/dns-providers/${connectionId}`)).status).toBe(404)
    const log = (await call(owner, 'GET', '/dns-providers/writes')).body
    expect(log.meta.total).toBe(14)
    expect(log.data[0].connection_id).toBeNull()
    const orphan = await call(owner, 'POST', `/dns-providers/writes/${log.data[0].id}/rollback`)
    expect(orphan.status).toBe(400)
    const none = await write({ name: 'acme.test', values: ['x'], dry_run: true })
    expect(none.status).toBe(400)
    expect(Object.keys(none.body.errors)).toEqual(['domain'])
  })
})
