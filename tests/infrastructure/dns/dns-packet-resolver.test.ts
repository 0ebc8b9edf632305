import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { createSocket } from 'node:dgram'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DnsRecord } from '../../../domain/dns/ports.ts'
import {
  createDnsPacketResolver,
  type DnsPacketResolverOptions,
  parseDnsServers,
  parseResolvConf,
  systemDnsServers,
} from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { type DnsTestServer, soa, startDnsServer, type Zone } from '../../support/dns-server.ts'

// A 2048-bit RSA SubjectPublicKeyInfo is 294 bytes: 392 base64 characters, more than one
// character-string can hold, so DNS publishes the DKIM record as two strings in one RR.
const dkimKey = Buffer.from(Array.from({ length: 294 }, (_, i) => (i * 37 + 11) % 256)).toString('base64')
const dkimValue = `v=DKIM1; k=rsa; p=${dkimKey}`
const dkimStrings = [dkimValue.slice(0, 255), dkimValue.slice(255)]
const spfStrings = ['v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32', ' include:_spf.a.example.test', ' -all']

const chain = (prefix: string, length: number): Zone =>
  Object.fromEntries(
    Array.from({ length }, (_, i) => [
      `${prefix}${i}.example.test`,
      [{ type: 'CNAME', data: `${prefix}${i + 1}.example.test` }],
    ]),
  )

const zone: Zone = {
  'example.test': [
    soa(120),
    { type: 'A', data: '192.0.2.1', ttl: 600 },
    { type: 'AAAA', data: '2001:db8::1', ttl: 600 },
    { type: 'MX', data: { preference: 20, exchange: 'mx2.example.test' } },
    { type: 'MX', data: { preference: 10, exchange: 'MX1.Example.Test.' } },
    { type: 'NS', data: 'ns1.example.test' },
    { type: 'TXT', data: spfStrings, ttl: 900 },
    { type: 'TXT', data: 'google-site-verification=abc' },
  ],
  'sel._domainkey.example.test': [{ type: 'TXT', data: dkimStrings, ttl: 3600 }],
  'utf8.example.test': [{ type: 'TXT', data: ['caf\u00e9 ', '\u2713'] }],
  'only-a.example.test': [{ type: 'A', data: '192.0.2.2' }],
  'null-mx.example.test': [{ type: 'MX', data: { preference: 0, exchange: '.' } }],
  '1.2.0.192.in-addr.arpa': [{ type: 'PTR', data: 'Mail.Example.Test.' }],
  'www.example.test': [{ type: 'CNAME', data: 'alias.example.test', ttl: 60 }],
  'alias.example.test': [{ type: 'CNAME', data: 'host.example.test', ttl: 30 }],
  'host.example.test': [{ type: 'A', data: '192.0.2.7', ttl: 600 }],
  'dangling.example.test': [{ type: 'CNAME', data: 'gone.example.test' }],
  'loop1.example.test': [{ type: 'CNAME', data: 'loop2.example.test' }],
  'loop2.example.test': [{ type: 'CNAME', data: 'loop1.example.test' }],
  ...chain('long', 9),
  'long9.example.test': [{ type: 'A', data: '192.0.2.9' }],
  ...chain('ok', 8),
  'ok8.example.test': [{ type: 'A', data: '192.0.2.8' }],
  'big.example.test': Array.from({ length: 8 }, (_, i) => ({
    type: 'TXT' as const,
    data: `${i}`.repeat(200),
  })),
  'tc.example.test': [{ type: 'TXT', data: 'small but forced over TCP' }],
  'slow.example.test': [{ type: 'A', data: '192.0.2.3' }],
  'broken.example.test': [{ type: 'A', data: '192.0.2.4' }],
  'forged.example.test': [{ type: 'A', data: '192.0.2.5' }],
}

let server: DnsTestServer
let backup: DnsTestServer
const resolverFor = (options: DnsPacketResolverOptions = {}) =>
  createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: server.port }], timeoutMs: 500, ...options })

beforeAll(async () => {
  server = await startDnsServer(zone)
  backup = await startDnsServer(zone)
})
afterAll(async () => {
  await Promise.all([server.stop(), backup.stop()])
})
beforeEach(() => {
  server.reset()
  backup.reset()
  server.options.chaseCnames = true
})

describe('TXT (regression for oven-sh/bun#21370)', () => {
  test('a 2048-bit DKIM key in two character-strings is one record with both strings intact', async () => {
    const answer = await resolverFor().resolve('sel._domainkey.example.test', 'TXT')
    expect(answer).toEqual({
      status: 'ok',
      authenticated: false,
      records: [{ type: 'TXT', strings: dkimStrings, ttl: 3600 }],
    })
    expect(dkimStrings[0]).toHaveLength(255)
    if (answer.status === 'ok' && answer.records[0]?.type === 'TXT') {
      expect(answer.records[0].strings.join('')).toBe(dkimValue)
    }
  })

  test('an SPF record in three strings and a second TXT RR stay two records', async () => {
    const answer = await resolverFor().resolve('example.test', 'TXT')
    expect(answer.status).toBe('ok')
    if (answer.status !== 'ok') return
    expect(answer.records).toHaveLength(2)
    expect(answer.records).toContainEqual({ type: 'TXT', strings: spfStrings, ttl: 900 })
    expect(answer.records).toContainEqual({
      type: 'TXT',
      strings: ['google-site-verification=abc'],
      ttl: 300,
    })
  })

  test('each string is decoded as UTF-8', async () => {
    const answer = await resolverFor().resolve('utf8.example.test', 'TXT')
    expect(answer).toMatchObject({
      status: 'ok',
      records: [{ type: 'TXT', strings: ['caf\u00e9 ', '\u2713'] }],
    })
  })
})

describe('record types', () => {
  test('A and AAAA with TTLs', async () => {
    const resolver = resolverFor()
    expect(await resolver.resolve('example.test', 'A')).toEqual({
      status: 'ok',
      authenticated: false,
      records: [{ type: 'A', address: '192.0.2.1', ttl: 600 }],
    })
    expect(await resolver.resolve('example.test', 'AAAA')).toMatchObject({
      records: [{ type: 'AAAA', address: '2001:db8::1', ttl: 600 }],
    })
  })

  test('MX, NS and PTR names come back lower-cased without the trailing dot', async () => {
    const resolver = resolverFor()
    const mx = await resolver.resolve('example.test', 'MX')
    const byPreference = (r: DnsRecord) => (r.type === 'MX' ? r.preference : 0)
    expect(mx.status === 'ok' && mx.records.toSorted((a, b) => byPreference(a) - byPreference(b))).toEqual([
      { type: 'MX', preference: 10, exchange: 'mx1.example.test', ttl: 300 },
      { type: 'MX', preference: 20, exchange: 'mx2.example.test', ttl: 300 },
    ])
    expect(await resolver.resolve('example.test', 'NS')).toMatchObject({
      records: [{ type: 'NS', target: 'ns1.example.test', ttl: 300 }],
    })
    expect(await resolver.resolve('1.2.0.192.in-addr.arpa', 'PTR')).toMatchObject({
      records: [{ type: 'PTR', target: 'mail.example.test' }],
    })
  })

  test('a null MX (RFC 7505) keeps the root as "."', async () => {
    expect(await resolverFor().resolve('null-mx.example.test', 'MX')).toMatchObject({
      records: [{ type: 'MX', preference: 0, exchange: '.' }],
    })
  })

  test('names are case-insensitive and may end in a dot', async () => {
    expect(await resolverFor().resolve('Example.TEST.', 'A')).toMatchObject({
      status: 'ok',
      records: [{ address: '192.0.2.1' }],
    })
    expect(server.queries[0]?.name).toBe('example.test')
  })

  test('the query asks for recursion and AD over EDNS0 without DO', async () => {
    await resolverFor().resolve('example.test', 'A')
    expect(server.queries).toEqual([
      expect.objectContaining({
        transport: 'udp',
        rd: true,
        ad: true,
        edns: { udpPayloadSize: 1232, do: false },
      }),
    ])
  })

  test('the AD bit of a validating resolver is reported', async () => {
    server.options.authenticated = true
    try {
      expect(await resolverFor().resolve('example.test', 'A')).toMatchObject({
        status: 'ok',
        authenticated: true,
      })
    } finally {
      server.options.authenticated = false
    }
  })
})

describe('negative answers and failures', () => {
  test('NXDOMAIN carries the negative TTL min(SOA TTL, MINIMUM) (RFC 2308 §5)', async () => {
    expect(await resolverFor().resolve('missing.example.test', 'TXT')).toEqual({
      status: 'nxdomain',
      ttl: 120,
    })
  })

  test('an existing name without the type is nodata, not nxdomain', async () => {
    expect(await resolverFor().resolve('only-a.example.test', 'TXT')).toEqual({ status: 'nodata', ttl: 120 })
    // An empty non-terminal exists too (RFC 8020).
    expect(await resolverFor().resolve('_domainkey.example.test', 'TXT')).toEqual({
      status: 'nodata',
      ttl: 120,
    })
  })

  test('NXDOMAIN without an SOA has no TTL', async () => {
    expect(await resolverFor().resolve('nowhere.invalid', 'A')).toEqual({
      status: 'nxdomain',
      ttl: undefined,
    })
  })

  test('SERVFAIL and REFUSED are errors, asked once when there is no other server', async () => {
    server.behave('broken.example.test', { rcode: 'SERVFAIL' })
    expect(await resolverFor().resolve('broken.example.test', 'A')).toEqual({
      status: 'error',
      reason: 'server answered SERVFAIL',
    })
    server.behave('broken.example.test', { rcode: 'REFUSED' })
    expect(await resolverFor().resolve('broken.example.test', 'A')).toMatchObject({ status: 'error' })
    expect(server.queries).toHaveLength(2)
  })

  test('a dropped answer is a timeout after attempts × timeoutMs', async () => {
    server.behave('slow.example.test', { drop: true })
    const started = performance.now()
    const answer = await resolverFor({ timeoutMs: 120, attempts: 2 }).resolve('slow.example.test', 'A')
    const elapsed = performance.now() - started
    expect(answer).toEqual({ status: 'timeout' })
    expect(elapsed).toBeGreaterThanOrEqual(230)
    expect(elapsed).toBeLessThan(1000)
    expect(server.queries.map((q) => q.name)).toEqual(['slow.example.test', 'slow.example.test'])
    // Each attempt uses a fresh random id (RFC 5452 §4.3).
    expect(server.queries[0]?.id).not.toBe(server.queries[1]?.id)
  })

  test('an answer later than the timeout is a timeout', async () => {
    server.behave('slow.example.test', { delayMs: 300 })
    expect(await resolverFor({ timeoutMs: 100, attempts: 1 }).resolve('slow.example.test', 'A')).toEqual({
      status: 'timeout',
    })
  })

  test('a silent server is skipped for the next one', async () => {
    server.behave('slow.example.test', { drop: true })
    const resolver = createDnsPacketResolver({
      servers: [
        { host: '127.0.0.1', port: server.port },
        { host: '127.0.0.1', port: backup.port },
      ],
      timeoutMs: 100,
    })
    expect(await resolver.resolve('slow.example.test', 'A')).toMatchObject({
      status: 'ok',
      records: [{ address: '192.0.2.3' }],
    })
    expect([server.queries.length, backup.queries.length]).toEqual([1, 1])
  })

  test('a closed port is an error, not a hang', async () => {
    const probe = createSocket('udp4')
    await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', () => resolve()))
    const port = probe.address().port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const answer = await createDnsPacketResolver({
      servers: [{ host: '127.0.0.1', port }],
      timeoutMs: 300,
    }).resolve('example.test', 'A')
    // Linux reports the ICMP port unreachable to a connected UDP socket.
    expect(answer).toEqual({ status: 'error', reason: `udp 127.0.0.1:${port}: ECONNREFUSED` })
  })

  test('an invalid name is an error without any query', async () => {
    expect(await resolverFor().resolve(`${'a'.repeat(64)}.example.test`, 'A')).toMatchObject({
      status: 'error',
    })
    expect(await resolverFor().resolve('', 'A')).toMatchObject({ status: 'error' })
    expect(server.queries).toHaveLength(0)
  })
})

describe('anti-spoofing', () => {
  test('an answer with the wrong id is ignored', async () => {
    server.behave('forged.example.test', { forgeFirst: 'id' })
    expect(await resolverFor().resolve('forged.example.test', 'A')).toMatchObject({
      status: 'ok',
      records: [{ address: '192.0.2.5' }],
    })
  })

  test('an answer for another question is ignored', async () => {
    server.behave('forged.example.test', { forgeFirst: 'question' })
    expect(await resolverFor().resolve('forged.example.test', 'A')).toMatchObject({
      status: 'ok',
      records: [{ address: '192.0.2.5' }],
    })
  })
})

describe('truncation', () => {
  test('TC=1 over UDP is retried over TCP', async () => {
    server.behave('tc.example.test', { truncate: true })
    expect(await resolverFor().resolve('tc.example.test', 'TXT')).toMatchObject({
      status: 'ok',
      records: [{ strings: ['small but forced over TCP'] }],
    })
    expect(server.queries.map((q) => q.transport)).toEqual(['udp', 'tcp'])
  })

  test('an answer larger than the EDNS buffer comes whole over TCP', async () => {
    const answer = await resolverFor().resolve('big.example.test', 'TXT')
    expect(answer.status === 'ok' && answer.records.length).toBe(8)
    expect(server.queries.map((q) => q.transport)).toEqual(['udp', 'tcp'])
  })

  test('without TCP fallback a truncated answer is an error', async () => {
    server.behave('tc.example.test', { truncate: true })
    expect(await resolverFor({ tcpFallback: false }).resolve('tc.example.test', 'TXT')).toMatchObject({
      status: 'error',
    })
  })
})

describe('CNAME', () => {
  test('a chain in the answer is followed; TTLs are capped by the CNAMEs', async () => {
    expect(await resolverFor().resolve('www.example.test', 'A')).toEqual({
      status: 'ok',
      authenticated: false,
      records: [{ type: 'A', address: '192.0.2.7', ttl: 30 }],
    })
    expect(server.queries).toHaveLength(1)
  })

  test('the target is queried when the server returns only the CNAME', async () => {
    server.options.chaseCnames = false
    expect(await resolverFor().resolve('www.example.test', 'A')).toMatchObject({
      records: [{ address: '192.0.2.7', ttl: 30 }],
    })
    expect(server.queries.map((q) => q.name)).toEqual([
      'www.example.test',
      'alias.example.test',
      'host.example.test',
    ])
  })

  test('asking for the CNAME itself does not follow it', async () => {
    expect(await resolverFor().resolve('www.example.test', 'CNAME')).toMatchObject({
      records: [{ type: 'CNAME', target: 'alias.example.test', ttl: 60 }],
    })
  })

  test('a CNAME to a missing name is NXDOMAIN (RFC 6604)', async () => {
    expect(await resolverFor().resolve('dangling.example.test', 'A')).toMatchObject({ status: 'nxdomain' })
  })

  test('a loop is an error, with and without the server chasing it', async () => {
    expect(await resolverFor().resolve('loop1.example.test', 'A')).toMatchObject({
      status: 'error',
      reason: expect.stringContaining('loop'),
    })
    server.options.chaseCnames = false
    expect(await resolverFor().resolve('loop1.example.test', 'A')).toMatchObject({
      status: 'error',
      reason: expect.stringContaining('loop'),
    })
    expect(server.queries).toHaveLength(3)
  })

  test('eight hops are followed, nine are not', async () => {
    expect(await resolverFor().resolve('ok0.example.test', 'A')).toMatchObject({
      status: 'ok',
      records: [{ address: '192.0.2.8' }],
    })
    expect(await resolverFor().resolve('long0.example.test', 'A')).toMatchObject({ status: 'error' })
    server.options.chaseCnames = false
    server.reset()
    expect(await resolverFor().resolve('long0.example.test', 'A')).toMatchObject({ status: 'error' })
    expect(server.queries.length).toBeLessThanOrEqual(9)
  })
})

describe('server configuration', () => {
  test('DNS_SERVERS is parsed as host:port pairs', () => {
    expect(parseDnsServers('127.0.0.1:5353, [::1]:53,9.9.9.9')).toEqual([
      { host: '127.0.0.1', port: 5353 },
      { host: '::1', port: 53 },
      { host: '9.9.9.9', port: 53 },
    ])
    expect(() => parseDnsServers('dns.example:53')).toThrow()
    expect(() => parseDnsServers('127.0.0.1:99999')).toThrow()
  })

  test('resolv.conf nameservers are read, with 127.0.0.1:53 as the fallback', () => {
    const text =
      '# comment\nsearch example.test\nnameserver 10.0.0.1\nnameserver fe80::1%eth0\nnameserver bogus\n'
    expect(parseResolvConf(text)).toEqual([
      { host: '10.0.0.1', port: 53 },
      { host: 'fe80::1', port: 53 },
    ])
    const dir = mkdtempSync(join(tmpdir(), 'resolv-'))
    try {
      writeFileSync(join(dir, 'resolv.conf'), text)
      expect(systemDnsServers(join(dir, 'resolv.conf'))).toHaveLength(2)
      expect(systemDnsServers(join(dir, 'missing.conf'))).toEqual([{ host: '127.0.0.1', port: 53 }])
    } finally {
      rmSync(dir, { recursive: true })
    }
  })
})
