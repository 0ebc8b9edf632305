import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { eventsOf } from '../../infrastructure/repositories/pg-event-outbox.ts'
import { SPF_ZONE, type SpfTestApp, startSpfApp } from '../support/spf-app.ts'
import type { TestAccount } from '../support/test-app.ts'

// The SPF management API against a loopback DNS server: reading, activation (one event, version 1,
// hosted records, audit), sources by include and by IP, the lookup limit, versions, rollback,
// detection from reports, the verified-only rule, tenant isolation and the DNS write limit.

let s: SpfTestApp
let owner: TestAccount
let shopId: number
const HOSTED = `shop-example.${SPF_ZONE}`

const api = (method: string, path: string, body?: unknown, token = owner.token) =>
  s.t.request(method, `/api/v1/domains/${path}`, { token, body })
const count = async (table: string, domainId: number) =>
  rowsOf<{ n: number }>(
    await s.t.db.database.db.execute(
      sql`select count(*)::int as n from ${sql.raw(table)} where domain_id = ${domainId}`,
    ),
  )[0]!.n

beforeAll(async () => {
  s = await startSpfApp()
  owner = await s.t.account()
  shopId = await s.addDomain(owner, 'shop.example', {
    spf: 'v=spf1 include:_spf.mailer.example ip4:203.0.113.5 ~all',
  })
  // SendGrid (catalog network) with DKIM-aligned mail failing SPF alignment; an unknown sender.
  await s.report(owner, shopId, { ip: '149.72.10.20', messages: 40, dkimAligned: true, spfAligned: false })
  await s.report(owner, shopId, { ip: '198.51.100.77', messages: 5, dkimAligned: false, spfAligned: false })
}, 60_000)
afterAll(() => s.close())

describe('SPF management of shop.example', () => {
  test('GET spf before activation: the published record and its analysis', async () => {
    const res = await api('GET', 'shop.example/spf')
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      domain: 'shop.example',
      verified: true,
      managed: false,
      management: null,
      published: {
        status: 'ok',
        record: 'v=spf1 include:_spf.mailer.example ip4:203.0.113.5 ~all',
        lookups: 1,
        lookup_limit: 10,
      },
    })
    expect(res.body.data.published.include_tree.children[0].domain).toBe('_spf.mailer.example')
  })

  test('activation: the published sources, version 1, hosted records, an audit entry and one event', async () => {
    const res = await api('POST', 'shop.example/spf/activate')
    expect(res.status).toBe(200)
    const m = res.body.data.management
    expect(res.body.data).toMatchObject({ domain: 'shop.example', changed: true, activated: true })
    expect(m).toMatchObject({ hosted_name: HOSTED, include: `include:${HOSTED}`, version: 1 })
    expect(m.config).toEqual({
      sources: [
        { kind: 'include', domain: '_spf.mailer.example', term: 'include:_spf.mailer.example' },
        { kind: 'ip4', network: '203.0.113.5', term: 'ip4:203.0.113.5' },
      ],
      all: '~all',
      flatten: 'auto',
    })
    expect(m.served.records.map((r: { text: string }) => r.text)).toEqual([
      'v=spf1 ip4:203.0.113.5 include:_spf.mailer.example ~all',
    ])
    // The published terms moved into the hosted record: one include replaces them.
    expect(m.publish).toMatchObject({ record: `v=spf1 include:${HOSTED} ~all`, changed: true, lookups: 1 })

    const db = s.t.db.database.db
    const events = await eventsOf(db, owner.accountId)
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['domain.verified', expect.anything()],
      ['spf.activated', { domain: 'shop.example', record: `v=spf1 include:${HOSTED} ~all`, include: HOSTED }],
    ])
    expect(await count('spf_versions', shopId)).toBe(1)
    const hosted = rowsOf<{ name: string; txt: string[] }>(
      await db.execute(sql`select name, txt from hosted_records where domain_id = ${shopId}`),
    )
    expect(hosted).toEqual([
      { name: HOSTED, txt: ['v=spf1 ip4:203.0.113.5 include:_spf.mailer.example ~all'] },
    ])
    const audit = rowsOf<{ action: string; actor: string }>(
      await db.execute(sql`select action, actor from audit_log where domain_id = ${shopId}`),
    )
    expect(audit).toEqual([{ action: 'spf.activate', actor: expect.stringMatching(/^user:/) }])
  })

  test('activating again returns the current state: no version, no second event', async () => {
    const res = await api('POST', 'shop.example/spf/activate', {})
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ changed: false, activated: false, management: { version: 1 } })
    // A JSON content type with no body at all is no body, not a validation error.
    const empty = await s.t.request('POST', '/api/v1/domains/shop.example/spf/activate', {
      token: owner.token,
      body: '',
      headers: { 'content-type': 'application/json' },
    })
    expect(empty.status).toBe(200)
    const malformed = await api('POST', 'shop.example/spf/activate', '{"sources": [')
    expect(malformed.status).toBe(400)
    expect(malformed.body.errors.body).toBeArray()
    expect(await count('spf_versions', shopId)).toBe(1)
    const events = await eventsOf(s.t.db.database.db, owner.accountId)
    expect(events.filter((e) => e.type === 'spf.activated')).toHaveLength(1)
  })

  test('add-to-spf by IP of a catalog service: its include', async () => {
    const res = await api('POST', 'shop.example/sources/149.72.10.20/add-to-spf')
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      source: { kind: 'include', domain: 'sendgrid.net', service_id: 'sendgrid' },
      service: { id: 'sendgrid', name: expect.any(String) },
      changed: true,
      managed: true,
      management: { version: 2 },
    })
    expect(res.body.data.management.served.records[0].text).toContain('include:sendgrid.net')
    // Already there: nothing is written.
    const again = await api('POST', 'shop.example/sources/149.72.10.20/add-to-spf', {})
    expect(again.body.data).toMatchObject({ changed: false, management: { version: 2 } })
  })

  test('add-to-spf by IP of an unknown sender: the address; by include: the include', async () => {
    const byIp = await api('POST', 'shop.example/sources/198.51.100.77/add-to-spf')
    expect(byIp.body.data).toMatchObject({
      source: { kind: 'ip4', network: '198.51.100.77' },
      service: null,
      management: { version: 3 },
    })
    const byInclude = await api('POST', 'shop.example/sources/198.51.100.77/add-to-spf', {
      include: 'big.example',
    })
    // 10 lookups inside big.example: flattened (flatten auto) to stay within the hosted budget of 9.
    expect(byInclude.status).toBe(200)
    expect(byInclude.body.data.source).toEqual({ kind: 'include', domain: 'big.example' })
    expect(byInclude.body.data.management).toMatchObject({ version: 4, served: { flattened: true } })
  })

  test('add-to-spf refusals: not an IP, not a source of the domain, a network without the IP', async () => {
    const notIp = await api('POST', 'shop.example/sources/not-an-ip/add-to-spf')
    expect(notIp.status).toBe(400)
    expect(notIp.body.errors.source).toBeArray()
    const unknown = await api('POST', 'shop.example/sources/192.0.2.200/add-to-spf')
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('not_found')
    const outside = await api('POST', 'shop.example/sources/198.51.100.77/add-to-spf', {
      network: '10.1.0.0/16',
    })
    expect(outside.status).toBe(400)
    expect(outside.body.errors.network[0]).toContain('does not hold')
  })

  test('over the lookup limit with flatten never: spf_lookup_limit_exceeded, nothing written', async () => {
    const res = await api('POST', 'shop.example/spf/activate', { flatten: 'never' })
    expect(res.status).toBe(400)
    // Hosted: big.example (10) + _spf.mailer.example + sendgrid.net = 12, + the user's include.
    expect(res.body).toMatchObject({ error: 'spf_lookup_limit_exceeded', lookups: 13, limit: 10 })
    expect(await count('spf_versions', shopId)).toBe(4)
  })

  test('invalid sources are reported by index', async () => {
    const res = await api('POST', 'shop.example/spf/activate', {
      sources: [
        { kind: 'ip4', network: '192.0.2.1' },
        { kind: 'ip4', network: '2001:db8::1' },
      ],
    })
    expect(res.status).toBe(400)
    expect(Object.keys(res.body.errors)).toEqual(['sources.1.network'])
    const kind = await api('POST', 'shop.example/spf/activate', {
      sources: [{ kind: 'txt', domain: 'x.example' }],
    })
    expect(kind.status).toBe(400)
    expect(kind.body.errors['sources.0.kind'][0]).toContain('include')
    const all = await api('POST', 'shop.example/spf/activate', { all: '+all', flatten: 'sometimes' })
    expect(all.status).toBe(400)
    expect(all.body.errors.all[0]).toContain('-all')
  })

  test('versions: newest first, with what each changed', async () => {
    const res = await api('GET', 'shop.example/spf/versions?per_page=2')
    expect(res.status).toBe(200)
    expect(res.body.meta).toEqual({ total: 4, page: 1, per_page: 2, last_page: 2 })
    expect(res.body.data.map((v: { version: number; current: boolean }) => [v.version, v.current])).toEqual([
      [4, true],
      [3, false],
    ])
    expect(res.body.data[1].changes.added.map((a: { term: string }) => a.term)).toEqual(['ip4:198.51.100.77'])
    expect(res.body.data[1].reason).toBe('added ip4:198.51.100.77 for source 198.51.100.77')
    const last = await api('GET', 'shop.example/spf/versions?page=2&per_page=2')
    expect(last.body.data.map((v: { version: number }) => v.version)).toEqual([2, 1])
    expect(last.body.data[1].changes.added).toHaveLength(2)
  })

  test('rollback: a new version serving what version 1 served; unknown versions are 404', async () => {
    const v1 = (await api('GET', 'shop.example/spf/versions?page=4&per_page=1')).body.data[0]
    const res = await api('POST', 'shop.example/spf/rollback', { version: 1 })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ changed: true, management: { version: 5 } })
    expect(res.body.data.management.served.records).toEqual(v1.served.records)
    const served = rowsOf<{ txt: string[] }>(
      await s.t.db.database.db.execute(sql`select txt from hosted_records where domain_id = ${shopId}`),
    )
    expect(served.map((r) => r.txt)).toEqual([v1.served.records[0].text].map((text) => [text]))
    const same = await api('POST', 'shop.example/spf/rollback', { version: 1 })
    expect(same.body.data).toMatchObject({ changed: false, management: { version: 5 } })
    const missing = await api('POST', 'shop.example/spf/rollback', { version: 99 })
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('not_found')
    const invalid = await api('POST', 'shop.example/spf/rollback', { version: 0 })
    expect(invalid.status).toBe(400)
  })

  test('detect-sources: proposals when manual, applied when automatic', async () => {
    const proposed = await api('POST', 'shop.example/spf/detect-sources')
    expect(proposed.status).toBe(200)
    expect(proposed.body.data).toMatchObject({
      automation_level: 'manual',
      applied: false,
      period: { days: 30 },
    })
    // The unknown sender has no aligned mail and no verdict: not legitimate-looking, not proposed.
    expect(proposed.body.data.proposals).toEqual([
      {
        source: {
          kind: 'include',
          domain: 'sendgrid.net',
          label: expect.any(String),
          service_id: 'sendgrid',
          term: 'include:sendgrid.net',
        },
        service: { id: 'sendgrid', name: expect.any(String) },
        ips: ['149.72.10.20'],
        messages: 40,
        spf_failing: 40,
        dmarc_pass: 40,
      },
    ])
    expect(await count('spf_versions', shopId)).toBe(5)

    await s.t.request('PATCH', '/api/v1/domains/shop.example', {
      token: owner.token,
      body: { automation_level: 'automatic' },
    })
    const applied = await api('POST', 'shop.example/spf/detect-sources')
    expect(applied.body.data).toMatchObject({
      automation_level: 'automatic',
      applied: true,
      management: { version: 6 },
    })
    const [latest] = (await api('GET', 'shop.example/spf/versions?per_page=1')).body.data
    expect(latest).toMatchObject({
      reason: 'detected sources',
      changes: { added: [{ term: 'include:sendgrid.net' }] },
    })
    // Nothing left to propose.
    const after = await api('POST', 'shop.example/spf/detect-sources')
    expect(after.body.data).toMatchObject({ applied: false, proposals: [] })
  })
})

describe('unmanaged domains', () => {
  test('add-to-spf answers the record to publish and writes nothing', async () => {
    const id = await s.addDomain(owner, 'plain.example', {
      spf: 'v=spf1 include:_spf.mailer.example -all',
      verify: false,
    })
    await s.report(owner, id, { ip: '149.72.10.21', messages: 3, dkimAligned: true, spfAligned: false })
    const res = await api('POST', 'plain.example/sources/149.72.10.21/add-to-spf')
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      managed: false,
      management: null,
      changed: true,
      publish: { record: 'v=spf1 include:_spf.mailer.example include:sendgrid.net -all', lookups: 2 },
    })
    expect(await count('spf_versions', id)).toBe(0)
    expect(await count('hosted_records', id)).toBe(0)
  })

  test('a record that would pass 10 lookups is refused (no flattening without management)', async () => {
    const id = await s.addDomain(owner, 'full.example', {
      spf: 'v=spf1 include:big.example -all',
      verify: false,
    })
    await s.report(owner, id, { ip: '149.72.10.22', messages: 3, dkimAligned: true, spfAligned: false })
    const res = await api('POST', 'full.example/sources/149.72.10.22/add-to-spf')
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ error: 'spf_lookup_limit_exceeded', lookups: 11, limit: 10 })
  })

  test('versions of an unmanaged domain: an empty list; rollback: 404', async () => {
    expect((await api('GET', 'plain.example/spf/versions')).body).toMatchObject({
      data: [],
      meta: { total: 0 },
    })
    expect((await api('POST', 'plain.example/spf/rollback', { version: 1 })).status).toBe(404)
  })

  test('an unverified domain cannot be activated', async () => {
    const res = await api('POST', 'plain.example/spf/activate')
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('forbidden')
    expect(res.body.message).toContain('verify')
  })
})

test("another account's domain: 403 domain_not_found on every SPF route", async () => {
  const stranger = await s.t.account()
  const calls: [string, string, unknown?][] = [
    ['GET', 'shop.example/spf'],
    ['POST', 'shop.example/spf/activate'],
    ['POST', 'shop.example/spf/detect-sources'],
    ['POST', 'shop.example/sources/149.72.10.20/add-to-spf'],
    ['GET', 'shop.example/spf/versions'],
    ['POST', 'shop.example/spf/rollback', { version: 1 }],
  ]
  for (const [method, path, body] of calls) {
    const res = await api(method, path, body, stranger.token)
    expect(res.status, `${method} ${path}`).toBe(403)
    expect(res.body.error).toBe('domain_not_found')
  }
})

test('DNS writes are limited per account (RATE_LIMIT_DNS_WRITES_PER_MINUTE)', async () => {
  const limited = await startSpfApp({ RATE_LIMIT_DNS_WRITES_PER_MINUTE: '3' })
  try {
    const minute = Math.floor(Date.now() / 60_000 + 5) * 60_000
    limited.t.clock.now = new Date(minute + 10_000)
    const account = await limited.t.account()
    await limited.addDomain(account, 'busy.example', { spf: 'v=spf1 ip4:192.0.2.1 -all' })
    const call = (body?: unknown) =>
      limited.t.request('POST', '/api/v1/domains/busy.example/spf/activate', { token: account.token, body })
    expect((await call()).status).toBe(200)
    expect((await call({ flatten: 'always' })).status).toBe(200)
    // No change, no write: not counted.
    expect((await call({ flatten: 'always' })).status).toBe(200)
    expect((await call({ all: '~all' })).status).toBe(200)
    const refused = await call({ all: '-all' })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: expect.stringContaining('Rate limit exceeded'), retry_after: 50 })
    expect(refused.headers.get('retry-after')).toBe('50')
    limited.t.clock.now = new Date(minute + 70_000)
    expect((await call({ all: '-all' })).status).toBe(200)
  } finally {
    await limited.close()
  }
})
