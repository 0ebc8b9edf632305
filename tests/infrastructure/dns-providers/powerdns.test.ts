import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { txtValues } from '../../../domain/dns/txt.ts'
import type { DnsProvider } from '../../../domain/dns-providers/ports.ts'
import { createDnsPacketResolver } from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { createPowerDnsProvider } from '../../../infrastructure/dns-providers/powerdns.ts'
import { type PowerDnsServer, startPowerDns } from '../../support/powerdns.ts'
import { loopbackProviderHttp } from '../../support/provider-http.ts'

// The PowerDNS adapter against a real PowerDNS Authoritative (tests/support/powerdns.ts): its HTTP
// API for every operation, and the project's own DNS resolver against its DNS port to prove that
// what the API accepted is what the server publishes.

const ZONE = { id: 'example.test.', name: 'example.test' }
const SPF = `v=spf1 ${Array.from({ length: 24 }, (_, i) => `ip4:198.51.100.${i}`).join(' ')} include:_spf.example.net -all`

describe('PowerDNS adapter', () => {
  let server: PowerDnsServer
  let pdns: DnsProvider
  const dns = (name: string, type: 'TXT' | 'MX' | 'CNAME' | 'A') =>
    createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: server.dnsPort }], attempts: 1 }).resolve(
      name,
      type,
    )

  beforeAll(async () => {
    server = await startPowerDns(['example.test', 'second.test'])
    pdns = createPowerDnsProvider({
      baseUrl: server.apiUrl,
      apiKey: server.apiKey,
      http: loopbackProviderHttp(),
    })
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
  })

  test('authenticates with the API key, and a wrong key is bad_credentials', async () => {
    expect(await pdns.authenticate()).toEqual({ ok: true, value: {} })
    const wrong = createPowerDnsProvider({
      baseUrl: `${server.apiUrl}/api/v1/`,
      apiKey: 'not-the-key',
      http: loopbackProviderHttp(),
    })
    const result = await wrong.authenticate()
    expect(result.ok ? 'ok' : result.failure.kind).toBe('bad_credentials')
  })

  test('lists the zones to import, by id and name', async () => {
    expect(await pdns.listZones()).toEqual({
      ok: true,
      value: [
        { id: 'example.test.', name: 'example.test' },
        { id: 'second.test.', name: 'second.test' },
      ],
    })
  })

  test('writes a TXT set with a value over 255 bytes; the API and real DNS read back the same text', async () => {
    expect(SPF.length).toBeGreaterThan(255)
    const set = {
      name: 'Example.TEST.',
      type: 'TXT',
      ttl: 300,
      values: [SPF, 'google-site-verification=abc "quoted" \\ text'],
    }
    expect(await pdns.upsertRecordSet(ZONE, set)).toEqual({ ok: true, value: undefined })

    const read = await pdns.readRecords(ZONE, { name: 'example.test', type: 'TXT' })
    expect(read).toEqual({
      ok: true,
      value: [{ name: 'example.test', type: 'TXT', ttl: 300, values: [...set.values].sort() }],
    })

    const answer = await dns('example.test', 'TXT')
    expect(answer.status).toBe('ok')
    expect(txtValues(answer).sort()).toEqual([...set.values].sort())
    // On the wire the long value is several character-strings, none over 255 bytes (RFC 1035 §3.3).
    const strings =
      answer.status === 'ok' ? answer.records.flatMap((r) => (r.type === 'TXT' ? r.strings : [])) : []
    expect(strings.length).toBeGreaterThan(2)
    expect(strings.every((s) => Buffer.byteLength(s) <= 255)).toBe(true)
  })

  test('replacing a set replaces every record of it, and rolling back restores the previous set', async () => {
    const name = '_dmarc.example.test'
    const before = { name, type: 'TXT', ttl: 300, values: ['v=DMARC1; p=none'] }
    expect((await pdns.upsertRecordSet(ZONE, before)).ok).toBe(true)
    const previous = await pdns.readRecords(ZONE, { name, type: 'TXT' })
    if (!previous.ok) throw new Error(previous.failure.message)

    const change = {
      name,
      type: 'TXT',
      ttl: 600,
      values: ['v=DMARC1; p=quarantine; rua=mailto:r@example.test'],
    }
    expect((await pdns.upsertRecordSet(ZONE, change)).ok).toBe(true)
    expect(txtValues(await dns(name, 'TXT'))).toEqual(change.values)

    expect((await pdns.upsertRecordSet(ZONE, previous.value[0]!)).ok).toBe(true)
    expect(txtValues(await dns(name, 'TXT'))).toEqual(before.values)
    expect(await pdns.readRecords(ZONE, { name, type: 'TXT' })).toEqual(previous)
  })

  test('MX and CNAME values are written absolute and read back without the trailing dot', async () => {
    const mx = {
      name: 'mail.example.test',
      type: 'MX',
      ttl: 300,
      values: ['10 mx1.example.test', '20 MX2.example.net.'],
    }
    const cname = {
      name: 'selector1._domainkey.example.test',
      type: 'CNAME',
      ttl: 300,
      values: ['s1.dkim.example.net'],
    }
    expect((await pdns.upsertRecordSet(ZONE, mx)).ok).toBe(true)
    expect((await pdns.upsertRecordSet(ZONE, cname)).ok).toBe(true)
    const read = await pdns.readRecords(ZONE, { name: 'mail.example.test' })
    expect(read.ok && read.value).toEqual([
      {
        name: 'mail.example.test',
        type: 'MX',
        ttl: 300,
        values: ['10 mx1.example.test', '20 mx2.example.net'],
      },
    ])
    const served = await dns('selector1._domainkey.example.test', 'CNAME')
    expect(served.status === 'ok' && served.records).toEqual([
      { type: 'CNAME', target: 's1.dkim.example.net', ttl: 300 },
    ])
  })

  test('reads the whole zone, SOA and NS included', async () => {
    const read = await pdns.readRecords(ZONE)
    if (!read.ok) throw new Error(read.failure.message)
    const types = read.value.filter((s) => s.name === 'example.test').map((s) => s.type)
    expect(types).toEqual(expect.arrayContaining(['NS', 'SOA', 'TXT']))
    const soa = read.value.find((s) => s.type === 'SOA')!
    expect(soa.values[0]).toMatch(/^\S+[^.] hostmaster\.example\.test \d+/)
  })

  test('deletes a set (gone from the API and from DNS); deleting it again succeeds', async () => {
    const name = 'gone.example.test'
    expect(
      (await pdns.upsertRecordSet(ZONE, { name, type: 'A', ttl: 60, values: ['192.0.2.1', '192.0.2.2'] })).ok,
    ).toBe(true)
    expect((await dns(name, 'A')).status).toBe('ok')
    expect(await pdns.deleteRecordSet(ZONE, name, 'a')).toEqual({ ok: true, value: undefined })
    expect(await pdns.readRecords(ZONE, { name })).toEqual({ ok: true, value: [] })
    expect((await dns(name, 'A')).status).toBe('nxdomain')
    expect(await pdns.deleteRecordSet(ZONE, name, 'A')).toEqual({ ok: true, value: undefined })
  })

  test('a zone the server does not have is not_found', async () => {
    const missing = { id: 'missing.test.', name: 'missing.test' }
    const read = await pdns.readRecords(missing)
    const write = await pdns.upsertRecordSet(missing, {
      name: 'missing.test',
      type: 'TXT',
      ttl: 60,
      values: ['x'],
    })
    expect([read, write].map((r) => (r.ok ? 'ok' : r.failure.kind))).toEqual(['not_found', 'not_found'])
  })

  test('data beside a CNAME is a conflict (PowerDNS 422 "Conflicts with pre-existing RRset")', async () => {
    const name = 'alias.example.test'
    expect(
      (await pdns.upsertRecordSet(ZONE, { name, type: 'CNAME', ttl: 60, values: ['example.net'] })).ok,
    ).toBe(true)
    const result = await pdns.upsertRecordSet(ZONE, { name, type: 'TXT', ttl: 60, values: ['x'] })
    expect(result.ok ? null : result.failure).toMatchObject({ kind: 'conflict' })
    expect(result.ok ? '' : result.failure.message).toContain('Conflicts with pre-existing RRset')
  })

  test('a request PowerDNS rejects (422) is invalid, and an invalid set never reaches it', async () => {
    const bogus = await pdns.deleteRecordSet(ZONE, 'x.example.test', 'BOGUS')
    expect(bogus.ok ? null : bogus.failure).toMatchObject({ kind: 'invalid' })
    expect(bogus.ok ? '' : bogus.failure.message).toContain('422')
    const local = [
      await pdns.upsertRecordSet(ZONE, { name: 'x.example.org', type: 'TXT', ttl: 60, values: ['x'] }),
      await pdns.upsertRecordSet(ZONE, { name: 'x.example.test', type: 'A', ttl: 60, values: ['300.1.1.1'] }),
      await pdns.upsertRecordSet(ZONE, { name: 'x.example.test', type: 'TXT', ttl: 60, values: [] }),
      await pdns.upsertRecordSet(ZONE, { name: 'a.*.example.test', type: 'TXT', ttl: 60, values: ['x'] }),
    ]
    expect(local.map((r) => (r.ok ? 'ok' : r.failure.kind))).toEqual([
      'invalid',
      'invalid',
      'invalid',
      'invalid',
    ])
  })

  test('an API that cannot be reached is unavailable', async () => {
    const down = createPowerDnsProvider({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'k',
      http: loopbackProviderHttp({ connectTimeoutMs: 2000 }),
    })
    const result = await down.listZones()
    expect(result.ok ? 'ok' : result.failure.kind).toBe('unavailable')
  })
})
