import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type HostileServer, hugeAnswer, redirectTo, serve } from '../support/hostile-http.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// POST /dns-providers/authenticate against provider endpoints that answer junk, redirect elsewhere
// or stream 300 MB: the provider failed, so the answer is 502 `dns_provider_error` with the
// provider's kind (docs/api.md "DNS providers", docs/outbound-http.md), never a 500, and nothing
// is stored. WEBHOOK_ALLOW_PRIVATE=1 lets the connection reach the loopback servers.

const MB = 1024 * 1024
let t: TestApp
let owner: TestAccount
const servers: HostileServer[] = []
const started = (server: HostileServer) => {
  servers.push(server)
  return server
}

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1', RATE_LIMIT_API_PER_MINUTE: '10000' })
  owner = await t.account()
})
afterAll(async () => {
  for (const server of servers) await server.stop()
  await t?.close()
})

const authenticate = (provider: string, credentials: Record<string, unknown>) =>
  t.request('POST', '/api/v1/dns-providers/authenticate', {
    token: owner.token,
    body: { provider, credentials },
  })

function expectProviderError(
  answer: { status: number; body: Record<string, unknown> },
  provider: string,
  detail: string,
) {
  expect(answer.status).toBe(502)
  expect(answer.body).toMatchObject({ error: 'dns_provider_error', provider, kind: 'unavailable' })
  expect(answer.body.message).toContain(detail)
}

describe('a PowerDNS endpoint that is not a PowerDNS API', () => {
  test('an HTML page is a provider error', async () => {
    const junk = started(
      serve(() => new Response('<html>It works!</html>', { headers: { 'content-type': 'text/html' } })),
    )
    expectProviderError(
      await authenticate('powerdns', { base_url: junk.origin, api_key: 'k' }),
      'powerdns',
      'malformed',
    )
  })

  test('a redirect to another origin is a provider error, and the key never gets there', async () => {
    const elsewhere = started(serve(() => Response.json({ id: 'localhost', daemon_type: 'authoritative' })))
    const hop = started(redirectTo(`${elsewhere.origin}/api/v1/servers/localhost`, 308))
    expectProviderError(
      await authenticate('powerdns', { base_url: hop.origin, api_key: 'k' }),
      'powerdns',
      'redirected',
    )
    expect(elsewhere.requests).toEqual([])
  })

  test('a 300 MB answer is a provider error', async () => {
    const huge = started(hugeAnswer(300 * MB))
    expectProviderError(
      await authenticate('powerdns', { base_url: huge.origin, api_key: 'k' }),
      'powerdns',
      'size limit',
    )
  })
})

describe('a Cloudflare endpoint that answers junk', () => {
  test('`result: null` and non-JSON are provider errors', async () => {
    const nulls = started(serve(() => Response.json({ success: true, errors: [], result: null })))
    expectProviderError(
      await authenticate('cloudflare', { base_url: `${nulls.origin}/client/v4`, api_token: 't' }),
      'cloudflare',
      'malformed',
    )
    const text = started(serve(() => new Response('Bad gateway, try later')))
    expectProviderError(
      await authenticate('cloudflare', { base_url: `${text.origin}/client/v4`, api_token: 't' }),
      'cloudflare',
      'malformed',
    )
  })
})

test('nothing was stored', async () => {
  const listed = await t.request('GET', '/api/v1/dns-providers', { token: owner.token })
  expect(listed.body.meta.total).toBe(0)
})
