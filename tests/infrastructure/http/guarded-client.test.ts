import { describe, expect, test } from 'bun:test'
import { asFetch } from '../../../infrastructure/http/fetch-adapter.ts'
import { createGuardedClient, type OutboundPolicy } from '../../../infrastructure/http/guarded-client.ts'
import {
  type HostileServer,
  hugeAnswer,
  peakRssGrowth,
  redirectTo,
  serve,
  silentServer,
  stallingBody,
  stopAfterEach,
} from '../../support/hostile-http.ts'
import { a, memoryDns } from '../../support/memory-dns.ts'
import { failureOf } from './failure-of.ts'

// The one outbound HTTP client (docs/outbound-http.md) against real servers on loopback that
// redirect to another origin, stall, stream 300 MB and answer junk.

const MB = 1024 * 1024
const started = stopAfterEach()

const policy = (overrides: Partial<OutboundPolicy> = {}): OutboundPolicy => ({
  dns: memoryDns({}),
  allowPrivate: true,
  maxResponseBytes: 64 * 1024,
  connectTimeoutMs: 2_000,
  totalTimeoutMs: 5_000,
  ...overrides,
})
const json = () => started(serve(() => Response.json({ ok: true })))

test('a plain answer: status, headers and the body as text and JSON', async () => {
  const server = json()
  const answer = await createGuardedClient(policy()).request(`${server.origin}/x`)
  expect(answer.status).toBe(200)
  expect(answer.json()).toEqual({ ok: true })
  expect(answer.truncated).toBe(false)
  expect(server.requests.map((r) => r.path)).toEqual(['/x'])
})

describe('the SSRF rules', () => {
  test('loopback, private and metadata addresses are refused unless this use allows them', async () => {
    const server = json()
    const strict = createGuardedClient(policy({ allowPrivate: false }))
    for (const url of [
      `https://127.0.0.1:${server.port}/`,
      'https://10.0.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/',
    ])
      expect((await failureOf(strict.request(url))).kind, url).toBe('refused')
    expect(server.requests).toEqual([])
  })

  test('a name is refused when any of its addresses is not public; one without any is unresolved', async () => {
    const dns = memoryDns({ 'mixed.example': [a('93.184.216.34'), a('127.0.0.1')] })
    const strict = createGuardedClient(policy({ allowPrivate: false, dns }))
    expect((await failureOf(strict.request('https://mixed.example/'))).message).toContain('127.0.0.1')
    expect((await failureOf(strict.request('https://nowhere.example/'))).kind).toBe('unresolved')
  })

  test('https only, unless private targets are allowed; other schemes and junk never', async () => {
    const strict = createGuardedClient(policy({ allowPrivate: false }))
    expect((await failureOf(strict.request('http://93.184.216.34/'))).message).toContain('https')
    const lax = createGuardedClient(policy())
    for (const url of ['ftp://127.0.0.1/', 'file:///etc/passwd', 'not a url'])
      expect((await failureOf(lax.request(url))).kind, url).toBe('refused')
  })
})

describe('redirects', () => {
  test('refused by default: the target, another origin, is never reached', async () => {
    const target = json()
    const hop = started(redirectTo(`${target.origin}/landed`))
    const failure = await failureOf(createGuardedClient(policy()).request(hop.origin))
    expect(failure.kind).toBe('redirect')
    expect(failure.message).toContain(target.origin)
    expect(target.requests).toEqual([])
  })

  test('manual: the 3xx is the answer', async () => {
    const hop = started(redirectTo('/elsewhere', 307))
    const answer = await createGuardedClient(policy()).request(hop.origin, { redirect: 'manual' })
    expect(answer.status).toBe(307)
    expect(hop.requests).toHaveLength(1)
  })

  test('followed only when asked; credentials never go to another origin', async () => {
    const target = json()
    const hop = started(redirectTo(`${target.origin}/landed`, 307))
    const secrets = { authorization: 'Bearer s3cret', 'x-api-key': 'k3y', cookie: 'session=1' }
    const answer = await createGuardedClient(policy()).request(hop.origin, {
      redirect: 'follow',
      headers: { ...secrets, accept: 'application/json' },
    })
    expect(answer.url.origin).toBe(target.origin)
    expect(hop.requests[0]!.headers).toMatchObject(secrets)
    const landed = target.requests[0]!
    expect(landed.path).toBe('/landed')
    expect(landed.headers.accept).toBe('application/json')
    for (const name of Object.keys(secrets)) expect(landed.headers[name], name).toBeUndefined()
  })

  test('within the same origin, credentials stay; a 303 after a POST becomes a GET', async () => {
    let first = true
    const server = started(
      serve(() => {
        if (!first) return Response.json({ ok: true })
        first = false
        return new Response(null, { status: 303, headers: { location: '/after' } })
      }),
    )
    await createGuardedClient(policy()).request(server.origin, {
      method: 'POST',
      body: '{}',
      redirect: 'follow',
      headers: { authorization: 'Bearer s3cret', 'content-type': 'application/json' },
    })
    expect(server.requests.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([
      ['POST', '/', 'Bearer s3cret'],
      ['GET', '/after', 'Bearer s3cret'],
    ])
  })

  test('each hop is vetted like the first: schemes, names, and the hop limit', async () => {
    const client = createGuardedClient(policy())
    for (const [location, kind] of [
      ['file:///etc/passwd', 'refused'],
      ['ftp://127.0.0.1/', 'refused'],
      ['http://nowhere.example/', 'unresolved'],
    ] as const) {
      const hop = started(redirectTo(location))
      expect((await failureOf(client.request(hop.origin, { redirect: 'follow' }))).kind, location).toBe(kind)
    }
    const loop = started(redirectTo('/again'))
    const failure = await failureOf(client.request(loop.origin, { redirect: 'follow', maxRedirects: 2 }))
    expect(failure.kind).toBe('redirect')
    expect(loop.requests).toHaveLength(3)
  })
})

describe('deadlines', () => {
  test('a server that never answers fails at the connect deadline, not the total one', async () => {
    const silent = started(silentServer())
    const began = performance.now()
    const failure = await failureOf(
      createGuardedClient(policy({ connectTimeoutMs: 300, totalTimeoutMs: 10_000 })).request(silent.origin),
    )
    const took = performance.now() - began
    expect(failure.kind).toBe('timeout')
    expect(took).toBeGreaterThanOrEqual(250)
    expect(took).toBeLessThan(3_000)
    expect(silent.connections()).toBe(1)
  })

  test('a body that stalls after the headers fails at the total deadline', async () => {
    const server = started(stallingBody())
    const began = performance.now()
    const failure = await failureOf(
      createGuardedClient(policy({ connectTimeoutMs: 5_000, totalTimeoutMs: 400 })).request(server.origin),
    )
    expect(failure.kind).toBe('timeout')
    expect(performance.now() - began).toBeLessThan(3_000)
  })

  test('with `truncate`, a stalled body keeps what came and is flagged', async () => {
    const server = started(stallingBody())
    const answer = await createGuardedClient(policy({ totalTimeoutMs: 300 })).request(server.origin, {
      overflow: 'truncate',
    })
    expect(answer.status).toBe(200)
    expect(answer.text()).toBe('{"res')
    expect(answer.truncated).toBe(true)
  })
})

describe('the size cap', () => {
  test('a 300 MB stream fails cleanly at the cap with bounded memory', async () => {
    const server: HostileServer = started(hugeAnswer(300 * MB))
    const client = createGuardedClient(policy({ maxResponseBytes: 8 * MB, totalTimeoutMs: 30_000 }))
    const { result, growthBytes } = await peakRssGrowth(() => failureOf(client.request(server.origin)))
    expect(result.kind).toBe('too_large')
    expect(growthBytes).toBeLessThan(32 * MB)
  })

  test('a declared Content-Length over the cap is refused before the body is read', async () => {
    const server = started(serve(() => new Response('x'.repeat(200_000))))
    const failure = await failureOf(createGuardedClient(policy()).request(server.origin))
    expect(failure).toMatchObject({ kind: 'too_large' })
  })

  test('with `truncate`, the first bytes up to the cap are kept', async () => {
    const server = started(hugeAnswer(300 * MB))
    const answer = await createGuardedClient(policy()).request(server.origin, { overflow: 'truncate' })
    expect(answer.body.byteLength).toBe(64 * 1024)
    expect(answer.truncated).toBe(true)
  })
})

test('as a fetch for libraries: the capped body, the status, no redirect followed', async () => {
  const server = json()
  const fetcher = asFetch(createGuardedClient(policy()))
  const response = await fetcher(`${server.origin}/jwks`, { redirect: 'manual' })
  expect(response.status).toBe(200)
  expect(await response.json()).toEqual({ ok: true })
  const target = json()
  const hop = started(redirectTo(target.origin))
  expect((await fetcher(hop.origin, { redirect: 'manual' })).status).toBe(302)
  await expect(fetcher(hop.origin)).rejects.toMatchObject({ kind: 'redirect' })
  expect(target.requests).toEqual([])
})
