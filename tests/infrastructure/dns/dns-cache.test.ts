import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { DnsAnswer, DnsResolver } from '../../../domain/dns/ports.ts'
import { type TtlCacheOptions, withTtlCache } from '../../../infrastructure/dns/dns-cache.ts'
import { createDnsPacketResolver } from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { type DnsTestServer, soa, startDnsServer } from '../../support/dns-server.ts'

let server: DnsTestServer
let clock = 0

beforeAll(async () => {
  server = await startDnsServer({
    'example.test': [soa(120, 3600), { type: 'TXT', data: ['v=spf1 ', '-all'], ttl: 60 }],
    'short.example.test': [
      { type: 'A', data: '192.0.2.1', ttl: 300 },
      { type: 'A', data: '192.0.2.2', ttl: 30 },
    ],
    'zero.example.test': [{ type: 'A', data: '192.0.2.3', ttl: 0 }],
    'long.example.test': [{ type: 'A', data: '192.0.2.4', ttl: 604_800 }],
    'a.example.test': [{ type: 'A', data: '192.0.2.10' }],
    'b.example.test': [{ type: 'A', data: '192.0.2.11' }],
    'c.example.test': [{ type: 'A', data: '192.0.2.12' }],
    'broken.example.test': [{ type: 'A', data: '192.0.2.13' }],
    'slow.example.test': [{ type: 'A', data: '192.0.2.14' }],
  })
})
afterAll(async () => {
  await server.stop()
})
beforeEach(() => {
  server.reset()
  clock = 1_000_000
})

const cached = (options: Partial<TtlCacheOptions> = {}) =>
  withTtlCache(
    createDnsPacketResolver({
      servers: [{ host: '127.0.0.1', port: server.port }],
      timeoutMs: 100,
      attempts: 1,
    }),
    { now: () => clock, ...options },
  )
const advance = (seconds: number) => {
  clock += seconds * 1000
}

describe('positive answers', () => {
  test('a repeated query is answered from the cache without network I/O', async () => {
    const resolver = cached()
    const first = await resolver.resolve('example.test', 'TXT')
    expect(first).toMatchObject({ status: 'ok', records: [{ strings: ['v=spf1 ', '-all'], ttl: 60 }] })
    expect(await resolver.resolve('Example.Test.', 'TXT')).toEqual(first)
    expect(server.queries).toHaveLength(1)
    expect(resolver.stats()).toEqual({ hits: 1, misses: 1, size: 1 })
  })

  test('the name and the type together are the key', async () => {
    const resolver = cached()
    await resolver.resolve('example.test', 'TXT')
    expect(await resolver.resolve('example.test', 'A')).toEqual({ status: 'nodata', ttl: 120 })
    expect(server.queries.map((q) => q.type)).toEqual(['TXT', 'A'])
  })

  test('an answer lives for its shortest TTL, and cached TTLs count down', async () => {
    const resolver = cached()
    await resolver.resolve('short.example.test', 'A')
    advance(29)
    const later = await resolver.resolve('short.example.test', 'A')
    expect(later.status === 'ok' && later.records.map((r) => r.ttl).sort((a, b) => a - b)).toEqual([1, 271])
    expect(server.queries).toHaveLength(1)
    advance(1)
    expect(await resolver.resolve('short.example.test', 'A')).toMatchObject({ status: 'ok' })
    expect(server.queries).toHaveLength(2)
  })

  test('TTL 0 is not cached unless minTtl says so; maxTtl caps long TTLs', async () => {
    const plain = cached()
    await plain.resolve('zero.example.test', 'A')
    await plain.resolve('zero.example.test', 'A')
    expect(server.queries).toHaveLength(2)
    expect(plain.stats().size).toBe(0)

    const floored = cached({ minTtl: 10 })
    await floored.resolve('zero.example.test', 'A')
    advance(9)
    await floored.resolve('zero.example.test', 'A')
    expect(server.queries).toHaveLength(3)

    const capped = cached({ maxTtl: 3600 })
    await capped.resolve('long.example.test', 'A')
    advance(3599)
    await capped.resolve('long.example.test', 'A')
    expect(server.queries).toHaveLength(4)
    advance(1)
    await capped.resolve('long.example.test', 'A')
    expect(server.queries).toHaveLength(5)
  })
})

describe('negative answers and failures', () => {
  test('NXDOMAIN is cached for the SOA negative TTL (RFC 2308)', async () => {
    const resolver = cached()
    expect(await resolver.resolve('missing.example.test', 'TXT')).toEqual({ status: 'nxdomain', ttl: 120 })
    advance(100)
    expect(await resolver.resolve('missing.example.test', 'TXT')).toEqual({ status: 'nxdomain', ttl: 20 })
    expect(server.queries).toHaveLength(1)
    advance(20)
    await resolver.resolve('missing.example.test', 'TXT')
    expect(server.queries).toHaveLength(2)
  })

  test('a negative answer without an SOA is cached for negativeTtl', async () => {
    const resolver = cached({ negativeTtl: 30 })
    expect(await resolver.resolve('nowhere.invalid', 'A')).toMatchObject({ status: 'nxdomain' })
    advance(29)
    await resolver.resolve('nowhere.invalid', 'A')
    expect(server.queries).toHaveLength(1)
    advance(1)
    await resolver.resolve('nowhere.invalid', 'A')
    expect(server.queries).toHaveLength(2)
  })

  test('a server failure is remembered only for failureTtl', async () => {
    server.behave('broken.example.test', { rcode: 'SERVFAIL' })
    const resolver = cached({ minTtl: 60 })
    expect(await resolver.resolve('broken.example.test', 'A')).toMatchObject({ status: 'error' })
    advance(4)
    expect(await resolver.resolve('broken.example.test', 'A')).toMatchObject({ status: 'error' })
    expect(server.queries).toHaveLength(1)
    advance(1)
    server.reset()
    expect(await resolver.resolve('broken.example.test', 'A')).toMatchObject({ status: 'ok' })
    expect(server.queries).toHaveLength(1)
  })

  test('a timeout is remembered briefly, then asked again', async () => {
    server.behave('slow.example.test', { drop: true })
    const resolver = cached({ failureTtl: 2 })
    expect(await resolver.resolve('slow.example.test', 'A')).toEqual({ status: 'timeout' })
    expect(await resolver.resolve('slow.example.test', 'A')).toEqual({ status: 'timeout' })
    expect(server.queries).toHaveLength(1)
    advance(2)
    await resolver.resolve('slow.example.test', 'A')
    expect(server.queries).toHaveLength(2)
  })
})

describe('sharing', () => {
  test('concurrent identical queries share one upstream query', async () => {
    server.behave('a.example.test', { delayMs: 20 })
    const resolver = cached()
    const answers = await Promise.all([
      resolver.resolve('a.example.test', 'A'),
      resolver.resolve('A.EXAMPLE.TEST', 'A'),
      resolver.resolve('a.example.test.', 'A'),
    ])
    expect(answers[1]).toEqual(answers[0] as DnsAnswer)
    expect(answers[2]).toEqual(answers[0] as DnsAnswer)
    expect(answers[0]).toMatchObject({ status: 'ok', records: [{ address: '192.0.2.10' }] })
    expect(server.queries).toHaveLength(1)
    expect(resolver.stats()).toEqual({ hits: 2, misses: 1, size: 1 })
  })

  test('the least recently used entry is evicted beyond maxEntries', async () => {
    const resolver = cached({ maxEntries: 2 })
    await resolver.resolve('a.example.test', 'A')
    await resolver.resolve('b.example.test', 'A')
    await resolver.resolve('a.example.test', 'A') // a is now the most recently used
    await resolver.resolve('c.example.test', 'A') // evicts b
    expect(resolver.stats().size).toBe(2)
    expect(server.queries.map((q) => q.name)).toEqual(['a.example.test', 'b.example.test', 'c.example.test'])
    await resolver.resolve('a.example.test', 'A')
    await resolver.resolve('c.example.test', 'A')
    expect(server.queries).toHaveLength(3)
    await resolver.resolve('b.example.test', 'A')
    expect(server.queries).toHaveLength(4)
    expect(resolver.stats()).toEqual({ hits: 3, misses: 4, size: 2 })
  })

  test('an upstream that throws becomes an error answer for every waiting caller', async () => {
    let calls = 0
    const throwing: DnsResolver = {
      async resolve() {
        calls++
        throw new Error('socket exploded')
      },
    }
    const resolver = withTtlCache(throwing, { now: () => clock })
    const answers = await Promise.all([resolver.resolve('x.test', 'A'), resolver.resolve('x.test', 'A')])
    expect(answers).toEqual([
      { status: 'error', reason: 'socket exploded' },
      { status: 'error', reason: 'socket exploded' },
    ])
    expect(calls).toBe(1)
  })
})
