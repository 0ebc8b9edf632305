import { describe, expect, test } from 'bun:test'
import type { DnsProvider, ProviderResult } from '../../../domain/dns-providers/ports.ts'
import { createCloudflareProvider } from '../../../infrastructure/dns-providers/cloudflare.ts'
import { createPowerDnsProvider } from '../../../infrastructure/dns-providers/powerdns.ts'
import {
  hugeAnswer,
  peakRssGrowth,
  redirectTo,
  serve,
  silentServer,
  stallingBody,
  stopAfterEach,
} from '../../support/hostile-http.ts'
import { loopbackProviderHttp } from '../../support/provider-http.ts'

// Provider endpoints that misbehave (docs/outbound-http.md, docs/dns-providers.md): every one of
// these is the provider failing, `unavailable` (502 dns_provider_error at the API), never a thrown
// error (a 500), never unbounded memory, and the API key or token never leaves for another origin.

const MB = 1024 * 1024
const started = stopAfterEach()

const ZONE = { id: 'example.com.', name: 'example.com' }
const powerdns = (origin: string, http = loopbackProviderHttp()) =>
  createPowerDnsProvider({ baseUrl: origin, apiKey: 'pdns-key', http })
const cloudflare = (origin: string, http = loopbackProviderHttp()) =>
  createCloudflareProvider({ apiToken: 'cf-token', baseUrl: `${origin}/client/v4`, http })

async function unavailable(result: Promise<ProviderResult<unknown>>): Promise<string> {
  const settled = await result
  expect(settled.ok).toBe(false)
  if (settled.ok) return ''
  expect(settled.failure.kind).toBe('unavailable')
  return settled.failure.message
}

const junkAnswers: [string, () => Response][] = [
  [
    'an HTML page',
    () => new Response('<html>Welcome to nginx</html>', { headers: { 'content-type': 'text/html' } }),
  ],
  ['invalid JSON', () => new Response('{"result": [', { headers: { 'content-type': 'application/json' } })],
  ['JSON null', () => Response.json(null)],
  ['a bare string', () => Response.json('ok')],
]

describe('PowerDNS', () => {
  test.each(junkAnswers)('%s from the server resource fails authenticate', async (_, answer) => {
    const server = started(serve(answer))
    expect(await unavailable(powerdns(server.origin).authenticate())).toContain('malformed')
  })

  test('an error status with an HTML page says so in a sentence, without the page', async () => {
    // Found by a conformance sweep: the API's 502 message carried the server's whole HTML page.
    const page = '<!DOCTYPE HTML>\n<html><head><title>501 Not Implemented</title></head></html>'
    const server = started(
      serve(() => new Response(page, { status: 501, headers: { 'content-type': 'text/html' } })),
    )
    const result = await powerdns(server.origin).authenticate()
    expect(result.ok).toBe(false)
    const message = result.ok ? '' : result.failure.message
    expect(message).toContain('501 an answer that is not JSON')
    expect(message).not.toContain('<')
  })

  test('zones and rrsets of the wrong shape are malformed answers', async () => {
    const wrong = started(
      serve((request) =>
        new URL(request.url).pathname.endsWith('/zones')
          ? Response.json([{ id: 7 }])
          : Response.json({ rrsets: [{ name: 'example.com.', type: 'TXT', records: 'no' }] }),
      ),
    )
    const pdns = powerdns(wrong.origin)
    expect(await unavailable(pdns.listZones())).toContain('malformed')
    expect(await unavailable(pdns.readRecords(ZONE))).toContain('malformed')
  })

  test('a redirect to another origin is not followed: the key never reaches it', async () => {
    const elsewhere = started(serve(() => Response.json({ id: 'localhost', daemon_type: 'authoritative' })))
    const hop = started(redirectTo(`${elsewhere.origin}/api/v1/servers/localhost`, 307))
    expect(await unavailable(powerdns(hop.origin).authenticate())).toContain('redirected')
    expect(hop.requests[0]!.headers['x-api-key']).toBe('pdns-key')
    expect(elsewhere.requests).toEqual([])
  })

  test('a server that never answers times out', async () => {
    const silent = started(silentServer())
    const pdns = powerdns(silent.origin, loopbackProviderHttp({ connectTimeoutMs: 300 }))
    expect(await unavailable(pdns.authenticate())).toContain('timed out')
  })

  test('a 300 MB answer to authenticate fails at the cap, with bounded memory', async () => {
    const server = started(hugeAnswer(300 * MB))
    const pdns = powerdns(server.origin)
    const { result, growthBytes } = await peakRssGrowth(() => unavailable(pdns.authenticate()))
    expect(result).toContain('size limit')
    expect(growthBytes).toBeLessThan(32 * MB)
  })
})

describe('Cloudflare', () => {
  const envelope = (result: unknown) => Response.json({ success: true, errors: [], messages: [], result })

  test.each(junkAnswers)('%s fails authenticate', async (_, answer) => {
    const server = started(serve(answer))
    expect(await unavailable(cloudflare(server.origin).authenticate())).toContain('malformed')
  })

  test('`result: null` fails every read, and a missing `success` is junk too', async () => {
    const nulls = started(serve(() => envelope(null)))
    const cf: DnsProvider = cloudflare(nulls.origin)
    for (const call of [cf.authenticate(), cf.listZones(), cf.readRecords(ZONE)])
      expect(await unavailable(call)).toContain('malformed')
    const bare = started(serve(() => Response.json({ result: [] })))
    expect(await unavailable(cloudflare(bare.origin).listZones())).toContain('success')
  })

  test('records of the wrong shape are malformed, not a crash', async () => {
    const server = started(serve(() => envelope([{ id: 'r1', name: 'example.com', type: 'TXT' }])))
    expect(await unavailable(cloudflare(server.origin).readRecords(ZONE))).toContain('malformed')
  })

  test('a redirect to another origin is not followed: the token never reaches it', async () => {
    const elsewhere = started(serve(() => envelope({ id: 't', status: 'active' })))
    const hop = started(redirectTo(`${elsewhere.origin}/client/v4/user/tokens/verify`))
    expect(await unavailable(cloudflare(hop.origin).authenticate())).toContain('redirected')
    expect(hop.requests[0]!.headers.authorization).toBe('Bearer cf-token')
    expect(elsewhere.requests).toEqual([])
  })

  test('a body that stalls times out', async () => {
    const server = started(stallingBody())
    const cf = cloudflare(server.origin, loopbackProviderHttp({ totalTimeoutMs: 300 }))
    expect(await unavailable(cf.listZones())).toContain('timed out')
  })

  test('a 300 MB answer fails at the cap, with bounded memory', async () => {
    const server = started(hugeAnswer(300 * MB))
    const cf = cloudflare(server.origin)
    const { result, growthBytes } = await peakRssGrowth(() => unavailable(cf.authenticate()))
    expect(result).toContain('size limit')
    expect(growthBytes).toBeLessThan(32 * MB)
  })
})
