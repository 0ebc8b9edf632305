import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ASSETS } from '../../src/dashboard/assets.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// The pages behind login: domains (list, add, posture with the records to publish, verification),
// API tokens (created once, usable against the API, revocable) and the account page.

let dns: DnsTestServer
let t: TestApp
let client: FormClient
let email: string

beforeAll(async () => {
  dns = await startDnsServer({
    'weak.example': [{ type: 'TXT', data: 'v=spf1 +all' }],
    '_dmarc.weak.example': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  })
  t = await startTestApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' })
  client = formClient(t)
  email = `pages-${Math.random().toString(36).slice(2, 8)}@example.com`
  await client.signUp(email)
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

describe('domains', () => {
  test('an empty list invites to add a domain', async () => {
    const page = await client.get('/domains')
    expect(page.html).toContain('No domains yet')
    expect(page.html).toContain('<h2>0 domains</h2>')
    expect(page.html).toContain('aria-current="page"')
  })

  test('a bad name is refused on the form; a good one is added and shows its posture', async () => {
    const csrf = await client.csrf()
    const bad = await client.post('/domains', { _csrf: csrf, domain_name: 'http://nope' })
    expect(bad.status).toBe(400)
    expect(bad.html).toContain('There is a problem')
    expect(bad.html).toContain('value="http://nope"')

    const added = await client.post('/domains', {
      _csrf: csrf,
      domain_name: 'Weak.Example',
      automation_level: 'assisted',
    })
    expect(added.status).toBe(303)
    expect(added.location).toBe('/domains/weak.example?added=1')
    const page = await client.get(added.location!)
    expect(page.status).toBe(200)
    expect(page.html).toContain('Domain added.')
    expect(page.html).toContain('aria-label="Grade F"')
    // The exact records to publish, from the same status as the API.
    const api = await t.request('GET', '/api/v1/domains/weak.example/status', {
      token: await t.tokenFor(email),
    })
    const fix = api.body.data.issues.find((issue: { fix?: unknown }) => issue.fix)
    expect(fix).toBeDefined()
    expect(page.html).toContain(Bun.escapeHTML(fix.fix.value))
    expect(page.html).toContain(Bun.escapeHTML(fix.fix.name))
    // Verification instructions with the account's token.
    const domain = await t.request('GET', '/api/v1/domains/weak.example', { token: await t.tokenFor(email) })
    expect(page.html).toContain(domain.body.data.verification.txt_value)
    expect(page.html).toContain('_dmarcwatch.weak.example')
  })

  test('the list shows policy, grade and status badges', async () => {
    const page = await client.get('/domains')
    expect(page.html).toContain('<h2>1 domain</h2>')
    expect(page.html).toContain('href="/domains/weak.example"')
    expect(page.html).toContain('p=none')
    expect(page.html).toContain('aria-label="Grade F"')
    expect(page.html).toContain('Not verified')
  })

  test('verifying without the record says what is missing', async () => {
    const answer = await client.post('/domains/weak.example/verify', { _csrf: await client.csrf() })
    expect(answer.status).toBe(200)
    expect(answer.html).toContain('No TXT record at _dmarcwatch.weak.example')
  })

  test('"Check now" re-checks and comes back to the page', async () => {
    const answer = await client.post('/domains/weak.example/check', { _csrf: await client.csrf() })
    expect(answer.status).toBe(303)
    expect(answer.location).toBe('/domains/weak.example')
  })

  test('another account’s domain, or none, is a 404 page', async () => {
    const stranger = formClient(t)
    await stranger.signUp(`stranger-${Math.random().toString(36).slice(2, 8)}@example.com`)
    for (const path of ['/domains/weak.example', '/domains/unknown.example', '/domains/%ff']) {
      const page = await stranger.get(path)
      expect(page.status).toBe(404)
      expect(page.html).not.toContain('v=spf1')
    }
    const verify = await stranger.post('/domains/weak.example/verify', { _csrf: await stranger.csrf() })
    expect(verify.status).toBe(404)
  })
})

describe('API access', () => {
  test('a token is shown once, works against the API, and can be revoked', async () => {
    const csrf = await client.csrf()
    const empty = await client.post('/settings/api/tokens', { _csrf: csrf, name: ' ' })
    expect(empty.status).toBe(400)
    expect(empty.html).toContain('name of 1-100 characters')

    const created = await client.post('/settings/api/tokens', {
      _csrf: csrf,
      name: 'CI <script>',
      expires_in_days: '30',
    })
    expect(created.status).toBe(200)
    const value = /id="token-value">(dw_[a-z2-7]{32})</.exec(created.html)![1]!
    expect(created.html).toContain('CI &lt;script&gt;')
    expect(created.html).not.toContain('<script>')
    const api = await t.request('GET', '/api/v1/domains', { token: value })
    expect(api.status).toBe(200)
    expect(api.body.data.map((d: { name: string }) => d.name)).toEqual(['weak.example'])

    // Never shown again.
    const list = await client.get('/settings/api')
    expect(list.html).not.toContain(value)
    expect(list.html).toContain(`${value.slice(0, 7)}…${value.slice(-4)}`)

    const id =
      /\/settings\/api\/tokens\/([0-9a-f-]{36})\/revoke" data-confirm="Revoke the token “CI &lt;script&gt;”/.exec(
        list.html,
      )![1]
    const revoked = await client.post(`/settings/api/tokens/${id}/revoke`, { _csrf: csrf })
    expect(revoked.location).toBe('/settings/api?revoked=1')
    expect((await client.get(revoked.location!)).html).toContain('The token is revoked.')
    expect((await t.request('GET', '/api/v1/domains', { token: value })).status).toBe(401)
  })

  test('another account cannot revoke my token', async () => {
    const page = await client.post('/settings/api/tokens', { _csrf: await client.csrf(), name: 'mine' })
    const value = /id="token-value">(dw_[a-z2-7]{32})</.exec(page.html)![1]!
    const id = /\/settings\/api\/tokens\/([0-9a-f-]{36})\/revoke" data-confirm="Revoke the token “mine”/.exec(
      (await client.get('/settings/api')).html,
    )![1]
    const stranger = formClient(t)
    await stranger.signUp(`thief-${Math.random().toString(36).slice(2, 8)}@example.com`)
    const refused = await stranger.post(`/settings/api/tokens/${id}/revoke`, { _csrf: await stranger.csrf() })
    expect(refused.location).toBe('/settings/api?revoked=none')
    expect((await stranger.get(refused.location!)).html).toContain('No such token')
    expect((await t.request('GET', '/api/v1/domains', { token: value })).status).toBe(200)
  })
})

test('the account page shows the report address and this session', async () => {
  const page = await client.get('/settings/account')
  expect(page.status).toBe(200)
  expect(page.html).toMatch(new RegExp(`id="report-address">r[a-z2-7]+@${t.config.ingestDomain}<`))
  expect(page.html).toContain('This browser')
  expect(page.html).toContain(email)
})

test('assets are served by the app with a content hash, a year of cache and an ETag', async () => {
  const page = await client.get('/domains')
  for (const asset of [ASSETS.css, ASSETS.js]) {
    expect(page.html).toContain(asset.path)
    const answer = await t.app.handle(new Request(`${t.config.publicUrl}${asset.path}`))
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe(asset.type)
    expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const etag = answer.headers.get('etag')!
    const again = await t.app.handle(
      new Request(`${t.config.publicUrl}${asset.path}`, { headers: { 'if-none-match': etag } }),
    )
    expect(again.status).toBe(304)
  }
  expect((await t.app.handle(new Request(`${t.config.publicUrl}/assets/app.0000.css`))).status).toBe(404)
})

test('dashboard routes stay out of the OpenAPI document', async () => {
  const spec = (await t.request('GET', '/openapi/json')).body
  const paths = Object.keys(spec.paths)
  for (const page of ['/login', '/signup', '/logout', '/domains', '/settings/api', '/assets/{file}'])
    expect(paths).not.toContain(page)
  expect(csrfOf((await client.get('/domains')).html)).toBeString()
})

test('a browser asking for a page that does not exist gets an HTML 404; API clients keep JSON', async () => {
  const page = await t.app.handle(
    new Request(`${t.config.publicUrl}/no-such-page`, {
      headers: { accept: 'text/html,application/xhtml+xml' },
    }),
  )
  expect(page.status).toBe(404)
  expect(page.headers.get('content-type')).toStartWith('text/html')
  expect(page.headers.get('content-security-policy')).toContain("default-src 'self'")
  expect(await page.text()).toContain('Page not found')
  const api = await t.app.handle(
    new Request(`${t.config.publicUrl}/api/v1/no-such-route`, { headers: { accept: 'text/html' } }),
  )
  expect(api.status).toBe(404)
  expect((await api.json()).error).toBe('not_found')
  const plain = await t.app.handle(new Request(`${t.config.publicUrl}/no-such-page`))
  expect((await plain.json()).error).toBe('not_found')
})
