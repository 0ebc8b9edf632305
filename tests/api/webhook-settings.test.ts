import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Webhook settings through the API (docs/webhooks.md): the secret shown and kept across URL changes,
// rotation, and the URL rules at save time, with and without WEBHOOK_ALLOW_PRIVATE. Deliveries:
// webhooks.test.ts.

let t: TestApp
let dns: DnsTestServer

const api = (method: string, path: string, account: TestAccount, body?: unknown) =>
  t.request(method, `/api/v1/webhooks${path}`, { token: account.token, body })

beforeAll(async () => {
  dns = await startDnsServer({
    'internal.example': [{ type: 'A', data: '10.0.0.5' }],
    'public.example': [{ type: 'A', data: '93.184.215.14' }],
  })
  t = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE: '1',
    RATE_LIMIT_API_PER_MINUTE: '10000',
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
  })
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

describe('settings', () => {
  test('nothing until a URL is saved; the secret is shown, kept across URL changes, rotatable', async () => {
    const account = await t.account()
    expect((await api('GET', '', account)).body.data).toEqual({ url: null, secret: null, updated_at: null })
    expect((await api('POST', '/test', account)).body.errors.url).toBeArray()
    for (const url of ['ftp://example.com/x', 'not a url', 'https://'])
      expect((await api('PUT', '', account, { url })).body.errors.url, url).toBeArray()
    const saved = (await api('PUT', '', account, { url: 'http://127.0.0.1:9/one' })).body.data
    expect(saved.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    const moved = (await api('PUT', '', account, { url: 'https://127.0.0.1:9/two' })).body.data
    expect(moved).toMatchObject({ url: 'https://127.0.0.1:9/two', secret: saved.secret })
    expect((await api('GET', '', account)).body.data).toEqual(moved)
    const rotated = (await api('POST', '/secret/rotate', account)).body.data
    expect(rotated.url).toBe(moved.url)
    expect(rotated.secret).not.toBe(saved.secret)
    expect((await api('PUT', '', account, { url: null })).body.data).toMatchObject({ url: null })
  })

  // Found by a hostile-input sweep: port 0 was saved. A URL with a user name or password would put a
  // secret in the API's answers and the delivery log, which show the URL (docs/webhooks.md).
  test('port 0 and a user name or password in the URL are refused, with and without WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = await startTestApp(
      { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' },
      { db: t.db },
    )
    try {
      for (const app of [t, strict]) {
        const account = await app.account()
        const put = (url: string) =>
          app.request('PUT', '/api/v1/webhooks', { token: account.token, body: { url } })
        for (const [url, message] of [
          ['https://93.184.216.34:0/x', 'The url must not use port 0.'],
          ['https://public.example:00/x', 'The url must not use port 0.'],
          ['https://user:pass@public.example/x', 'The url must not contain a user name or password.'],
          ['https://user@public.example/x', 'The url must not contain a user name or password.'],
          ['https://:pass@public.example/x', 'The url must not contain a user name or password.'],
        ]) {
          const res = await put(url!)
          expect({ url, status: res.status, errors: res.body.errors }).toEqual({
            url,
            status: 400,
            errors: { url: [message] },
          })
        }
        expect(
          (await app.request('GET', '/api/v1/webhooks', { token: account.token })).body.data.url,
        ).toBeNull()
        // An explicit port is fine; the default one is dropped as the URL standard does.
        expect((await put('https://public.example:8443/x')).body.data.url).toBe(
          'https://public.example:8443/x',
        )
        expect((await put('https://public.example:443/x')).body.data.url).toBe('https://public.example/x')
      }
    } finally {
      await strict.close()
    }
  })

  test('without WEBHOOK_ALLOW_PRIVATE: https only, and only hosts with public addresses', async () => {
    const strict = await startTestApp(
      { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' },
      { db: t.db },
    )
    try {
      const account = await strict.account()
      const put = (url: string) =>
        strict.request('PUT', '/api/v1/webhooks', { token: account.token, body: { url } })
      for (const url of [
        'http://public.example/hook',
        'https://127.0.0.1/hook',
        'https://10.1.2.3/hook',
        'https://[::1]/hook',
        'https://169.254.169.254/latest',
        'https://internal.example/hook',
        'https://nowhere.example/hook',
      ]) {
        const res = await put(url)
        expect(res.status, url).toBe(400)
        expect(res.body.errors.url[0], url).toBeString()
      }
      expect((await put('https://internal.example/hook')).body.errors.url[0]).toContain('10.0.0.5')
      expect((await put('https://public.example/hook')).status).toBe(200)
    } finally {
      await strict.close()
    }
  })
})
