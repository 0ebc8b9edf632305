import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { classifyAttempt } from '../../../domain/webhooks/schedule.ts'
import {
  RESPONSE_SNIPPET_BYTES,
  sendWebhook,
  WEBHOOK_TIMEOUT_MS,
  WEBHOOK_USER_AGENT,
  type WebhookSenderDeps,
} from '../../../infrastructure/http/webhook-sender.ts'
import { a, aaaa, memoryDns } from '../../support/memory-dns.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts'

// Every attempt goes to a real HTTP server on loopback that checks deliveries as a customer would
// (tests/support/webhook-receiver.ts, the code docs/webhooks.md shows). Loopback needs allowPrivate,
// as WEBHOOK_ALLOW_PRIVATE=1 gives the test suite; the SSRF tests turn it off.

let receiver: WebhookReceiver
const noDns = memoryDns({})
const local: WebhookSenderDeps = { dns: noDns, allowPrivate: true, now: () => new Date() }
const event = {
  id: '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b',
  type: 'alert.created',
  data: { alert_id: 7, domain: 'example.com', severity: 'high', title: 'SPF fails for a known sender' },
}
const send = (deps: Partial<WebhookSenderDeps> = {}, url = receiver.url) =>
  sendWebhook({ ...local, ...deps }, { url, secret: receiver.secret, event })

beforeAll(() => {
  receiver = startWebhookReceiver()
})
afterEach(() => {
  receiver.arrivals.length = 0
})
afterAll(() => receiver.stop())

describe('a delivery', () => {
  test('is a signed POST the receiver verifies, with the documented headers', async () => {
    const result = await send()
    expect(result.outcome).toEqual({ kind: 'response', status: 200 })
    expect(classifyAttempt(result.outcome)).toBe('delivered')
    expect(result.status).toBe(200)
    expect(result.responseSnippet).toBe('{"received":true}')
    expect(result.latencyMs).toBeGreaterThanOrEqual(0)

    expect(receiver.arrivals).toHaveLength(1)
    const [arrival] = receiver.arrivals
    expect(arrival!.verified).toBe(true)
    expect(arrival!.method).toBe('POST')
    expect(arrival!.path).toBe('/hooks')
    expect(arrival!.body).toBe(result.requestBody)
    expect(arrival!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'x-webhook-event': 'alert.created',
      'x-webhook-id': event.id,
    })
    expect(arrival!.headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/)
    expect(Object.keys(arrival!.headers).filter((name) => name.startsWith('x-'))).toEqual([
      'x-webhook-event',
      'x-webhook-id',
      'x-webhook-signature',
    ])
    // Asked uncompressed, so the 64 KB read bound is a bound on what the receiver sends.
    expect(arrival!.headers['accept-encoding']).toBe('identity')
    expect(Object.keys(JSON.parse(arrival!.body))).toEqual(['event', 'timestamp', 'data'])
    expect(JSON.parse(arrival!.body)).toMatchObject({ event: 'alert.created', data: event.data })
  })

  test('carries the attempt time, re-signed per attempt, under the same id', async () => {
    // The event happened an hour ago; attempt 1 failed then, attempt 5 runs now.
    const now = new Date()
    const anHourAgo = new Date(now.getTime() - 3_600_000)
    receiver.failNext(1, 503)
    const first = await send({ now: () => anHourAgo })
    const last = await send({ now: () => now })
    expect(first.attemptAt).toEqual(anHourAgo)
    expect(JSON.parse(first.requestBody).timestamp).toBe(anHourAgo.toISOString())
    expect(JSON.parse(last.requestBody).timestamp).toBe(now.toISOString())
    expect(classifyAttempt(last.outcome)).toBe('delivered')

    const [early, late] = receiver.arrivals
    expect(early!.headers['x-webhook-id']).toBe(late!.headers['x-webhook-id']!)
    expect(early!.headers['x-webhook-signature']).not.toBe(late!.headers['x-webhook-signature']!)
    // The receiver's 5 minute tolerance: the late attempt passes, the hour-old body does not.
    expect(late!.verified).toBe(true)
    expect(early!.verified).toBe(false)
    // An attacker replaying the first attempt's exact bytes now is refused.
    const replay = await fetch(receiver.url, {
      method: 'POST',
      headers: early!.headers,
      body: early!.body,
    })
    expect(replay.status).toBe(401)
  })
})

describe('receiver answers', () => {
  for (const status of [500, 502, 503, 408, 429]) {
    test(`${status} is retried`, async () => {
      receiver.failNext(1, status)
      const result = await send()
      expect(result.outcome).toEqual({ kind: 'response', status })
      expect(classifyAttempt(result.outcome)).toBe('retry')
      expect(result.responseSnippet).toBe(`scripted ${status}`)
    })
  }
  for (const status of [400, 401, 404, 410, 422]) {
    test(`${status} is not retried`, async () => {
      receiver.failNext(1, status)
      const result = await send()
      expect(result.status).toBe(status)
      expect(classifyAttempt(result.outcome)).toBe('give_up')
    })
  }

  test('a bad signature gets the customer 401, which is final', async () => {
    const result = await sendWebhook(local, { url: receiver.url, secret: 'whsec_wrong', event })
    expect(receiver.arrivals[0]!.verified).toBe(false)
    expect(result.status).toBe(401)
    expect(classifyAttempt(result.outcome)).toBe('give_up')
  })

  for (const status of [301, 302, 307, 308]) {
    test(`a ${status} redirect is not followed`, async () => {
      receiver.redirectNext(1, status, '/elsewhere')
      const result = await send()
      expect(result.outcome).toEqual({ kind: 'response', status })
      expect(classifyAttempt(result.outcome)).toBe('give_up')
      expect(receiver.arrivals.map((arrival) => arrival.path)).toEqual(['/hooks'])
    })
  }

  test('a receiver that hangs is a timeout, retried', async () => {
    receiver.hangNext()
    const started = performance.now()
    const result = await send({ timeoutMs: 300 })
    const took = performance.now() - started
    expect(result.outcome).toEqual({ kind: 'timeout' })
    expect(classifyAttempt(result.outcome)).toBe('retry')
    expect(result.status).toBeUndefined()
    expect(took).toBeGreaterThanOrEqual(250)
    expect(took).toBeLessThan(3000)
    expect(receiver.arrivals).toHaveLength(1)
  })

  test('the default timeout is the documented 10 s', () => {
    expect(WEBHOOK_TIMEOUT_MS).toBe(10_000)
  })

  test('a closed port is a connection error, retried', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
    const port = closed.port
    await closed.stop(true)
    const result = await send({}, `http://127.0.0.1:${port}/hooks`)
    expect(result.outcome.kind).toBe('connection_error')
    expect(classifyAttempt(result.outcome)).toBe('retry')
  })
})

describe('response bodies', () => {
  test('NUL and other control bytes in an answer are logged as U+FFFD (a text column refuses NUL)', async () => {
    // Found by a hostile-input sweep: the attempt's write failed, and the job with it, on every retry.
    const hostile = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response('err\u0000or\u0007 \ud800', { status: 500 }),
    })
    try {
      const result = await send({}, `http://127.0.0.1:${hostile.port}/hooks`)
      expect(result.outcome).toEqual({ kind: 'response', status: 500 })
      expect(result.responseSnippet).toBe('err\uFFFDor\uFFFD \uFFFD')
    } finally {
      await hostile.stop(true)
    }
  })

  test('a 10 MB answer is read no further than 64 KB and logged as 1 KB', async () => {
    receiver.hugeBodyNext(10 * 1024 * 1024)
    const started = performance.now()
    const result = await send({ timeoutMs: 5_000 })
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(result.outcome).toEqual({ kind: 'response', status: 200 })
    expect(result.responseTruncated).toBe(true)
    expect(result.responseSnippet).toBe('x'.repeat(RESPONSE_SNIPPET_BYTES))
  })

  test('an endless answer returns as soon as 64 KB are in, long before the timeout', async () => {
    // Reading to the end would never finish: returning fast proves the read stops at the bound.
    receiver.hugeBodyNext(Number.POSITIVE_INFINITY)
    const started = performance.now()
    const result = await send({ timeoutMs: 5_000 })
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(result.outcome).toEqual({ kind: 'response', status: 200 })
    expect(result.responseTruncated).toBe(true)
    expect(new TextEncoder().encode(result.responseSnippet).length).toBe(RESPONSE_SNIPPET_BYTES)
  })

  test('the snippet is cut on a character boundary', async () => {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('é'.repeat(600)) })
    try {
      const url = `http://127.0.0.1:${server.port}/`
      const result = await sendWebhook(local, { url, secret: receiver.secret, event })
      // 600 two-byte characters: 1 KB holds 512 of them, and the log keeps no half character.
      expect(result.responseSnippet).toBe('é'.repeat(512))
      expect(result.responseTruncated).toBe(false)
    } finally {
      await server.stop(true)
    }
  })

  test('a 200 whose body stalls is still delivered: the timeout cuts the body, the status stands', async () => {
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () =>
        new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('ok')) })),
    })
    try {
      const url = `http://127.0.0.1:${server.port}/`
      const result = await sendWebhook({ ...local, timeoutMs: 300 }, { url, secret: receiver.secret, event })
      expect(result.outcome).toEqual({ kind: 'response', status: 200 })
      expect(result.responseTruncated).toBe(true)
    } finally {
      await server.stop(true)
    }
  })
})

describe('SSRF rules', () => {
  const strict: Partial<WebhookSenderDeps> = { allowPrivate: false }

  test('plain http is refused unless private targets are allowed, before any DNS query', async () => {
    const dns = memoryDns({ 'example.com': [a('93.184.216.34')] })
    const result = await send({ ...strict, dns }, 'http://example.com/hooks')
    expect(result.outcome).toEqual({ kind: 'blocked', reason: 'webhook URLs must use https, not http:' })
    expect(classifyAttempt(result.outcome)).toBe('give_up')
    expect(dns.queries).toEqual([])
    // The body is still reported, for the delivery log.
    expect(JSON.parse(result.requestBody).event).toBe('alert.created')
  })

  test('other schemes and malformed URLs are refused even when private targets are allowed', async () => {
    for (const url of ['ftp://127.0.0.1/hooks', 'file:///etc/passwd', 'not a url', 'javascript:alert(1)'])
      expect((await send({}, url)).outcome.kind).toBe('blocked')
  })

  test('loopback, private, link-local and metadata addresses are refused', async () => {
    const port = receiver.port
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '192.168.1.1',
      '169.254.169.254',
      '[::1]',
      '[fe80::1]',
      '0.0.0.0',
    ])
      expect((await send(strict, `https://${host}:${port}/hooks`)).outcome.kind).toBe('blocked')
    // The loopback receiver was never reached.
    expect(receiver.arrivals).toEqual([])
  })

  test('a hostname is refused when any of its addresses is not public', async () => {
    const dns = memoryDns({
      'internal.example': [a('10.0.0.5')],
      'mixed.example': [a('93.184.216.34'), a('127.0.0.1')],
      'v6.example': [aaaa('::ffff:169.254.169.254')],
    })
    for (const host of ['internal.example', 'mixed.example', 'v6.example']) {
      const result = await send({ ...strict, dns }, `https://${host}/hooks`)
      expect(result.outcome.kind).toBe('blocked')
    }
  })

  test('a hostname that does not resolve is a connection error (DNS can recover), retried', async () => {
    const result = await send({ ...strict, dns: memoryDns({}) }, 'https://nowhere.example/hooks')
    expect(result.outcome).toEqual({ kind: 'connection_error', message: 'nowhere.example has no address' })
    expect(classifyAttempt(result.outcome)).toBe('retry')
  })

  test('the test receiver is reachable only because private targets are allowed', async () => {
    expect((await send({ allowPrivate: true })).outcome).toEqual({ kind: 'response', status: 200 })
    expect((await send(strict)).outcome.kind).toBe('blocked')
  })
})

test('a malformed event id is a programming error and throws', async () => {
  await expect(
    sendWebhook(local, { url: receiver.url, secret: receiver.secret, event: { ...event, id: 'nope' } }),
  ).rejects.toThrow()
})
