import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { registerJobs } from '../../infrastructure/queue/handlers.ts'
import { pgDomainVerifications } from '../../infrastructure/repositories/pg-domain-verification.ts'
import { providerDeps } from '../../src/compose/dns-providers.ts'
import { stores } from '../../src/compose.ts'
import { dnsProviderJobs } from '../../src/jobs/dns-providers.ts'
import { type PowerDnsServer, startPowerDns } from '../support/powerdns.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// /dns-providers against a real PowerDNS (tests/support/powerdns.ts): connect with a bad and a good
// key, pick zones, follow the import's progress page while the real pg-boss job runs in-process
// (the app's resolvers ask PowerDNS's DNS port, so verification goes over real DNS), remove the
// connection; CSRF and other accounts. WEBHOOK_ALLOW_PRIVATE=1 lets the app reach PowerDNS on loopback.

const ZONES = ['acme.test', 'old.test', 'shop.test', '2.0.192.in-addr.arpa']
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const suffix = Math.random().toString(36).slice(2, 8)
const email = `providers-${suffix}@example.com`

let pdns: PowerDnsServer
let t: TestApp
let client: FormClient
let other: FormClient
let connectionId: string
let importId: string

/** A form with repeated fields (the zone checkboxes), posted the way a browser posts it. */
async function postFields(c: FormClient, path: string, fields: [string, string][]) {
  const response = await t.app.handle(
    new Request(`${t.config.publicUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(t.config.publicUrl).origin,
        cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: new URLSearchParams(fields).toString(),
    }),
  )
  return { status: response.status, location: response.headers.get('location'), html: await response.text() }
}

const connect = (c: FormClient, fields: Record<string, string>) =>
  c.submit('/dns-providers', fields, '/dns-providers/connect')
const powerdns = (over: Record<string, string> = {}) => ({
  provider: 'powerdns',
  name: 'Lab PowerDNS',
  base_url: pdns.apiUrl,
  api_key: pdns.apiKey,
  server_id: '',
  ...over,
})
const connections = async () =>
  rowsOf<{ n: number }>(
    await t.db.database.db.execute(sql`select count(*)::int as n from dns_provider_connections`),
  )[0]!.n

beforeAll(async () => {
  pdns = await startPowerDns(ZONES)
  t = await startTestApp(
    { WEBHOOK_ALLOW_PRIVATE: '1', DNS_SERVERS: `127.0.0.1:${pdns.dnsPort}`, DNS_TIMEOUT_MS: '1000' },
    { queue: true },
  )
  client = formClient(t)
  other = formClient(t)
  await client.signUp(email)
  await other.signUp(`providers-other-${suffix}@example.com`)
  // Already in the account: the zone picker marks it and the import leaves it alone.
  const added = await client.submit('/domains', { domain_name: 'old.test' })
  expect(added.status).toBe(303)
}, 60_000)
afterAll(async () => {
  await t?.close()
  await pdns?.stop()
}, 30_000)

describe('DNS providers pages against PowerDNS', () => {
  test('no connection yet: a connect form per provider kind, secrets as password fields', async () => {
    const page = await client.get('/dns-providers')
    expect(page.status).toBe(200)
    expect(page.html).toContain('No DNS provider connected yet.')
    expect(page.html.match(/action="\/dns-providers\/connect"/g)).toHaveLength(3)
    for (const secret of ['powerdns-api_key', 'rfc2136-key_secret', 'cloudflare-api_token'])
      expect(page.html).toMatch(new RegExp(`id="${secret}" name="[a-z_]+" type="password" value=""`))
    expect(page.html).not.toContain('Imports are unavailable')
  })

  test('a wrong key: the form again with the provider’s refusal, the key not echoed, nothing stored', async () => {
    const bad = await connect(client, powerdns({ api_key: 'wrong-key-4711' }))
    expect(bad.status).toBe(400)
    expect(bad.html).toContain('There is a problem')
    expect(bad.html).toContain('id="powerdns-api_key-error"')
    expect(bad.html).toContain('PowerDNS rejected these credentials')
    expect(bad.html).toContain(`value="${pdns.apiUrl}"`)
    expect(bad.html).toContain('value="Lab PowerDNS"')
    expect(bad.html).not.toContain('wrong-key-4711')
    expect(bad.html).toContain('No DNS provider connected yet.')

    const missing = await connect(client, powerdns({ api_key: '' }))
    expect(missing.status).toBe(400)
    expect(missing.html).toContain('The api_key field is required.')
    const unreachable = await connect(client, powerdns({ base_url: 'http://127.0.0.1:1' }))
    expect(unreachable.status).toBe(502)
    expect(unreachable.html).toContain('PowerDNS: ')
    expect(unreachable.html).not.toContain(pdns.apiKey)
    const tsig = await connect(client, {
      provider: 'rfc2136',
      server: '127.0.0.1',
      port: String(pdns.dnsPort),
      zones: 'acme.test',
      key_name: pdns.otherKey.name,
      key_algorithm: 'hmac-sha256',
      key_secret: pdns.otherKey.secret,
      transport: 'tcp',
    })
    expect(tsig.status).toBe(400)
    expect(tsig.html).toContain('id="rfc2136-key_secret-error"')
    expect(tsig.html).toContain('The server refused the TSIG key')
    expect(tsig.html).toContain(`value="${pdns.dnsPort}"`)
    expect(tsig.html).not.toContain(pdns.otherKey.secret)
    const port = await connect(client, { provider: 'rfc2136', server: '127.0.0.1', port: 'dns' })
    expect(port.status).toBe(400)
    expect(port.html).toContain('The port is a number such as 53.')
    expect(await connections()).toBe(0)
  })

  test('connecting needs the CSRF token and the own origin', async () => {
    expect((await client.post('/dns-providers/connect', powerdns())).status).toBe(403)
    expect((await client.post('/dns-providers/connect', { _csrf: 'forged', ...powerdns() })).status).toBe(403)
    const csrf = await client.csrf()
    const foreign = await client.post(
      '/dns-providers/connect',
      { _csrf: csrf, ...powerdns() },
      { origin: 'https://evil.example' },
    )
    expect(foreign.status).toBe(403)
    expect(await connections()).toBe(0)
  })

  test('a good key: connected and listed with its settings, never with the key', async () => {
    const good = await connect(client, powerdns())
    expect(good.status).toBe(303)
    expect(good.location).toBe('/dns-providers?connected=1')
    const page = await client.get('/dns-providers?connected=1')
    expect(page.html).toContain('The provider is connected.')
    expect(page.html).toContain('<th scope="row">Lab PowerDNS</th>')
    expect(page.html).toContain(`base url: ${pdns.apiUrl} · server id: localhost`)
    expect(page.html).not.toContain(pdns.apiKey)
    connectionId = new RegExp(`href="/dns-providers/(${UUID})/import"`).exec(page.html)![1]!
    const stored = rowsOf<{ sealed: string }>(
      await t.db.database.db.execute(
        sql`select credentials_sealed as sealed from dns_provider_connections where id = ${connectionId}`,
      ),
    )
    expect(stored[0]!.sealed).not.toContain(pdns.apiKey)
  })

  test('import: the zones with the present ones marked, then live progress until every zone is a verified domain', async () => {
    const picker = await client.get(`/dns-providers/${connectionId}/import`)
    expect(picker.status).toBe(200)
    expect(picker.html).toContain('4 zones at PowerDNS, 2 new')
    const row = (zone: string) =>
      new RegExp(`<tr>\\s*<td><input[^>]*value="${zone.replaceAll('.', '\\.')}"([^>]*)>[\\s\\S]*?</tr>`).exec(
        picker.html,
      )!
    expect(row('acme.test')[1]).toContain('checked')
    expect(row('shop.test')[1]).toContain('checked')
    expect(row('old.test')[1]).toContain('disabled')
    expect(row('old.test')[0]).toContain('already in your account')
    expect(row('2.0.192.in-addr.arpa')[0]).toContain('reverse zone')

    const action = `/dns-providers/${connectionId}/import`
    const csrf = csrfOf(picker.html)
    expect((await postFields(client, action, [['zones', 'acme.test']])).status).toBe(403)
    const none = await postFields(client, action, [['_csrf', csrf]])
    expect(none.status).toBe(400)
    expect(none.html).toContain('Choose at least one zone to import.')
    const started = await postFields(client, action, [
      ['_csrf', csrf],
      ['zones', 'acme.test'],
      ['zones', 'shop.test'],
    ])
    expect(started.status).toBe(303)
    importId = new RegExp(`^/dns-providers/imports/(${UUID})$`).exec(started.location!)![1]!

    // No worker yet: the import waits in the queue, and its page reloads itself.
    const queued = await client.get(started.location!)
    expect(queued.status).toBe(200)
    expect(queued.html).toMatch(/<head>[\s\S]*<meta http-equiv="refresh" content="2">[\s\S]*<\/head>/)
    expect(queued.html).toContain('<span class="badge unknown">queued</span>')
    expect(queued.html).toContain('Waiting for the first zone')
    expect(queued.html).toContain('0 of 2 zones handled')

    const { runtime } = t
    await registerJobs(
      runtime.boss!,
      dnsProviderJobs(runtime.boss!, {
        providers: providerDeps(runtime, stores(runtime.database).counter),
        verifications: pgDomainVerifications(runtime.database.db, runtime.boss!),
        logger: runtime.logger,
        now: runtime.now,
      }),
    )
    let page = queued
    const deadline = Date.now() + 30_000
    while (!page.html.includes('<span class="badge ok">done</span>') && Date.now() < deadline) {
      await Bun.sleep(200)
      page = await client.get(started.location!)
    }
    expect(page.html).toContain('<span class="badge ok">done</span>')
    expect(page.html).not.toContain('http-equiv="refresh"')
    expect(page.html).toContain('2 of 2 zones handled')
    expect(page.html).toContain('<progress id="import-progress" max="2" value="2">')
    expect(page.html).toContain('<h1>Import from Lab PowerDNS</h1>')
    for (const zone of ['acme.test', 'shop.test']) {
      const result = new RegExp(`<th scope="row">${zone.replace('.', '\\.')}</th>([\\s\\S]*?)</tr>`).exec(
        page.html,
      )![1]!
      expect(result).toContain(`<a href="/domains/${zone}">${zone}</a>`)
      expect(result).toContain('<span class="badge ok">imported</span>')
      expect(result).toContain(
        '<span class="badge ok">verified</span> <span class="muted">record written through PowerDNS and seen over DNS</span>',
      )
    }

    const token = await t.tokenFor(email)
    for (const zone of ['acme.test', 'shop.test']) {
      const domain = await t.request('GET', `/api/v1/domains/${zone}`, { token })
      expect(domain.body.data.verified).toBe(true)
    }
    expect((await t.request('GET', '/api/v1/domains/old.test', { token })).body.data.verified).toBe(false)
    const list = await client.get('/domains')
    for (const zone of ['acme.test', 'old.test', 'shop.test']) expect(list.html).toContain(`>${zone}</a>`)
    expect(list.html).not.toContain('in-addr.arpa')
  }, 60_000)

  test('another account sees nothing and reaches nothing', async () => {
    const page = await other.get('/dns-providers')
    expect(page.html).toContain('No DNS provider connected yet.')
    expect(page.html).not.toContain('Lab PowerDNS')
    expect((await other.get(`/dns-providers/${connectionId}/import`)).status).toBe(404)
    expect((await other.get(`/dns-providers/${connectionId}/delete`)).status).toBe(404)
    const progress = await other.get(`/dns-providers/imports/${importId}`)
    expect(progress.status).toBe(404)
    expect(progress.html).not.toContain('acme.test')
    const csrf = await other.csrf()
    expect((await other.post(`/dns-providers/${connectionId}/delete`, { _csrf: csrf })).status).toBe(404)
    const imported = await postFields(other, `/dns-providers/${connectionId}/import`, [
      ['_csrf', csrf],
      ['zones', 'acme.test'],
    ])
    expect(imported.status).toBe(404)
    expect(await connections()).toBe(1)
  })

  test('where no job queue runs, imports are unavailable', async () => {
    const queueless = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1' }, { db: t.db })
    try {
      const visitor = formClient(queueless)
      expect((await visitor.logIn(email)).status).toBe(303)
      const page = await visitor.get('/dns-providers')
      expect(page.html).toContain(
        'Imports are unavailable on this server: no job queue runs in this process.',
      )
      expect(page.html).toContain('<th scope="row">Lab PowerDNS</th>')
      expect(page.html).not.toContain(`/dns-providers/${connectionId}/import`)
      const picker = await visitor.get(`/dns-providers/${connectionId}/import`)
      expect(picker.status).toBe(503)
      expect(picker.html).toContain('Imports are unavailable')
    } finally {
      await queueless.close()
    }
  })

  test('removal asks first, needs CSRF, then forgets the connection', async () => {
    const confirm = await client.get(`/dns-providers/${connectionId}/delete`)
    expect(confirm.status).toBe(200)
    expect(confirm.html).toContain('<h1>Remove Lab PowerDNS?</h1>')
    expect(confirm.html).toContain(`<form method="post" action="/dns-providers/${connectionId}/delete"`)
    expect((await client.post(`/dns-providers/${connectionId}/delete`, {})).status).toBe(403)
    expect(await connections()).toBe(1)
    const removed = await client.post(`/dns-providers/${connectionId}/delete`, {
      _csrf: csrfOf(confirm.html),
    })
    expect(removed.status).toBe(303)
    expect(removed.location).toBe('/dns-providers?removed=1')
    const page = await client.get('/dns-providers?removed=1')
    expect(page.html).toContain('The connection is removed and its credentials forgotten.')
    expect(page.html).toContain('No DNS provider connected yet.')
    expect((await client.get(`/dns-providers/${connectionId}/import`)).status).toBe(404)
    expect(await connections()).toBe(0)
    // The imported domains stay.
    expect((await client.get('/domains')).html).toContain('>acme.test</a>')
  })

  test('logged out: the pages go to login', async () => {
    const visitor = formClient(t)
    const page = await visitor.get('/dns-providers')
    expect(page.status).toBe(303)
    expect(page.location).toStartWith('/login')
    expect((await visitor.post('/dns-providers/connect', powerdns())).location).toBe('/login')
  })
})
