import { afterAll, beforeAll, expect, test } from 'bun:test'
import { openPostgres } from '../../infrastructure/db/database.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { backend } from '../support/test-db.ts'

// docs/api.md "Authentication and limits": fixed calendar windows, state in the database so every server process shares one
// budget, the X-RateLimit trio on every API response, 429 with Retry-After when exceeded.

let t: TestApp

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '5', RATE_LIMIT_PUBLIC_PER_MINUTE: '3' })
}, 60_000)
afterAll(() => t.close())

/** A fixed instant 10 s into a minute, so a test never straddles a window boundary. */
function pinClock(minuteOffset: number): number {
  const start = Math.floor(Date.now() / 60_000 + minuteOffset) * 60_000
  t.clock.now = new Date(start + 10_000)
  return start / 1000
}

test('the per-token budget counts down within the window and refuses the next request', async () => {
  const windowStart = pinClock(10)
  const { token } = await t.account()
  const remaining: string[] = []
  for (let i = 0; i < 5; i++) {
    const res = await t.request('GET', '/api/v1/domains', { token })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-ratelimit-limit')).toBe('5')
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(windowStart + 60))
    remaining.push(res.headers.get('x-ratelimit-remaining')!)
  }
  expect(remaining).toEqual(['4', '3', '2', '1', '0'])
  const refused = await t.request('GET', '/api/v1/domains', { token })
  expect(refused.status).toBe(429)
  expect(refused.body).toEqual({ error: expect.stringContaining('Rate limit exceeded'), retry_after: 50 })
  expect(refused.headers.get('retry-after')).toBe('50')
  expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
  expect(refused.headers.get('x-request-id')).toBeTruthy()

  // The next calendar minute is a fresh window.
  t.clock.now = new Date((windowStart + 60) * 1000 + 1000)
  const next = await t.request('GET', '/api/v1/domains', { token })
  expect(next.status).toBe(200)
  expect(next.headers.get('x-ratelimit-remaining')).toBe('4')
})

test('each token has its own budget', async () => {
  pinClock(20)
  const a = await t.account()
  const b = await t.account()
  for (let i = 0; i < 5; i++) await t.request('GET', '/api/v1/domains', { token: a.token })
  expect((await t.request('GET', '/api/v1/domains', { token: a.token })).status).toBe(429)
  expect((await t.request('GET', '/api/v1/domains', { token: b.token })).status).toBe(200)
})

test('requests without a valid token count against the client IP (public limit)', async () => {
  pinClock(30)
  const headers = { 'x-forwarded-for': '198.51.100.7' }
  // TRUST_PROXY is 0 here, so the forwarded header is ignored and the socket address (none in
  // app.handle) is the key: all three share it.
  for (let i = 0; i < 3; i++) {
    const res = await t.request('GET', '/api/v1/domains', { headers })
    expect(res.status).toBe(401)
    expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i))
  }
  const refused = await t.request('GET', '/api/v1/domains', { headers })
  expect(refused.status).toBe(429)
  expect(refused.headers.get('retry-after')).toBe('50')
})

test('with TRUST_PROXY the forwarded client address is the key', async () => {
  const proxied = await startTestApp({ RATE_LIMIT_PUBLIC_PER_MINUTE: '2', TRUST_PROXY: '1' }, { db: t.db })
  proxied.clock.now = t.clock.now = new Date(Math.floor(Date.now() / 60_000 + 40) * 60_000 + 5_000)
  const from = (ip: string) =>
    proxied.request('GET', '/api/v1/domains', { headers: { 'x-forwarded-for': `10.9.9.9, ${ip}` } })
  expect((await from('203.0.113.1')).status).toBe(401)
  expect((await from('203.0.113.1')).status).toBe(401)
  expect((await from('203.0.113.1')).status).toBe(429)
  expect((await from('203.0.113.2')).status).toBe(401)

  // An IPv6 client counts by its /56 (domain/rate-limits/client-network.ts): a host that changes
  // its address inside the network it was given shares one budget; the next /56 has its own.
  proxied.clock.now = t.clock.now = new Date(proxied.clock.now.getTime() + 60_000)
  expect((await from('2001:db8:aa:1::1')).status).toBe(401)
  expect((await from('2001:db8:aa:ff:1234::9')).status).toBe(401)
  expect((await from('2001:DB8:AA:0::77')).status).toBe(429)
  expect((await from('2001:db8:aa:100::1')).status).toBe(401)
  // An IPv4-mapped address is the IPv4 client.
  expect((await from('::ffff:203.0.113.9')).status).toBe(401)
  expect((await from('203.0.113.9')).status).toBe(401)
  expect((await from('203.0.113.9')).status).toBe(429)
})

test('two server instances on one database share one budget', async () => {
  // A second app with its own connection pool stands in for a second server process.
  const second = await startTestApp(
    { RATE_LIMIT_API_PER_MINUTE: '5' },
    {
      db:
        backend === 'postgres'
          ? { database: openPostgres(t.db.url!, { max: 2 }), url: t.db.url, drop: async () => {} }
          : t.db,
    },
  )
  const at = new Date(Math.floor(Date.now() / 60_000 + 50) * 60_000 + 5_000)
  t.clock.now = at
  second.clock.now = at
  const { token } = await t.account()
  const answers: number[] = []
  for (let i = 0; i < 6; i++) {
    const app = i % 2 === 0 ? t : second
    answers.push((await app.request('GET', '/api/v1/domains', { token })).status)
  }
  expect(answers).toEqual([200, 200, 200, 200, 200, 429])
  if (backend === 'postgres') await second.db.database.close()
})

test('concurrent requests never exceed the limit', async () => {
  pinClock(60)
  const { token } = await t.account()
  const statuses = await Promise.all(
    Array.from({ length: 20 }, () => t.request('GET', '/api/v1/domains', { token }).then((r) => r.status)),
  )
  expect(statuses.filter((s) => s === 200)).toHaveLength(5)
  expect(statuses.filter((s) => s === 429)).toHaveLength(15)
})
