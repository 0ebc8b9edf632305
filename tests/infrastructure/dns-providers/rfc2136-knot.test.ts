import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { txtValues } from '../../../domain/dns/txt.ts'
import type { DnsProvider } from '../../../domain/dns-providers/ports.ts'
import { createDnsPacketResolver } from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { answers, tcpExchange } from '../../../infrastructure/dns-providers/dns-exchange.ts'
import { buildQuery, TYPE_CODES } from '../../../infrastructure/dns-providers/dns-wire.ts'
import { createRfc2136Provider, type Rfc2136Options } from '../../../infrastructure/dns-providers/rfc2136.ts'
import { readTsig, signMessage, verifyAnswer } from '../../../infrastructure/dns-providers/tsig.ts'
import { type KnotServer, startKnot } from '../../support/knot.ts'

// The RFC 2136 adapter against a second implementation, Knot DNS (tests/support/knot.ts), with the
// same test set as against PowerDNS (rfc2136.test.ts): Knot signs its errors with a TSIG error code
// where PowerDNS answers unsigned, and it is the server's own view (knotc zone-read) that the
// adapter's writes are checked against.

const ZONE = { id: 'example.test', name: 'example.test' }
const SPF = `v=spf1 ${Array.from({ length: 24 }, (_, i) => `ip4:203.0.113.${i}`).join(' ')} include:_spf.example.net ~all`
// 1500 sets of ~100 bytes do not fit one 64 KiB message, so a transfer of second.test takes several.
const MANY = Array.from({ length: 1500 }, (_, i) => `r${i} 60 TXT "${'v'.repeat(80)}${i}"`)

const kind = (result: { ok: boolean; failure?: { kind: string } }) =>
  result.ok ? 'ok' : result.failure?.kind

describe('RFC 2136 adapter (TSIG) against Knot DNS', () => {
  let server: KnotServer
  let rfc2136: DnsProvider
  const provider = (options: Partial<Rfc2136Options> = {}) =>
    createRfc2136Provider({
      server: { host: '127.0.0.1', port: server.dnsPort },
      zones: ['example.test', 'second.test'],
      key: server.key,
      ...options,
    })
  const dns = (name: string, type: 'TXT' | 'A' | 'CNAME') =>
    createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: server.dnsPort }], attempts: 1 }).resolve(
      name,
      type,
    )
  const serial = async (zone: string) => /serial: (\d+)/.exec(await server.knotc('zone-status', zone))?.[1]

  beforeAll(async () => {
    server = await startKnot([{ name: 'example.test' }, { name: 'second.test', records: MANY }])
    rfc2136 = provider()
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
  })

  describe('authenticate (an UPDATE that changes nothing)', () => {
    test('the allowed key passes for every configured zone, without touching the SOA serial', async () => {
      const before = await serial('example.test')
      expect(before).toBe('1')
      expect(await rfc2136.authenticate()).toEqual({ ok: true, value: { account: 'dmarcwatch-test' } })
      expect(await serial('example.test')).toBe(before)
    })

    test('a wrong secret, an unknown key name or a skewed clock is bad_credentials', async () => {
      const results = [
        await provider({ key: { ...server.key, secret: server.otherKey.secret } }).authenticate(),
        await provider({ key: { ...server.key, name: 'nobody-knows-me' } }).authenticate(),
        await provider({ now: () => Date.now() + 3_600_000 }).authenticate(),
      ]
      expect(results.map(kind)).toEqual(['bad_credentials', 'bad_credentials', 'bad_credentials'])
      // Knot says which (RFC 8945 §5.2): BADSIG, BADKEY, BADTIME in a TSIG error.
      const messages = results.map((r) => (r.ok ? '' : r.failure.message))
      expect(messages[0]).toContain('BADSIG')
      expect(messages[1]).toContain('BADKEY')
      expect(messages[2]).toContain('BADTIME')
    })

    test('a key the server knows but does not allow for the zone is bad_credentials (Knot says BADKEY)', async () => {
      // Unlike PowerDNS (a signed REFUSED: forbidden), Knot answers a key no ACL allows exactly as
      // an unknown one, NOTAUTH with TSIG error BADKEY, so the adapter cannot say more than this.
      const result = await provider({ key: server.otherKey }).authenticate()
      expect(result.ok ? null : result.failure).toMatchObject({ kind: 'bad_credentials' })
      expect(result.ok ? '' : result.failure.message).toContain('BADKEY')
    })

    test('a configured zone the server does not serve is not_found (an unsigned NOTAUTH, no SOA)', async () => {
      const result = await provider({ zones: ['example.test', 'not-served.test'] }).authenticate()
      expect(result.ok ? null : result.failure).toMatchObject({ kind: 'not_found' })
    })
  })

  test('listZones returns the configured zones (RFC 2136 cannot list them)', async () => {
    expect(await rfc2136.listZones()).toEqual({
      ok: true,
      value: [
        { id: 'example.test', name: 'example.test' },
        { id: 'second.test', name: 'second.test' },
      ],
    })
  })

  test('writes a TXT set over 255 bytes; DNS, a signed query, a signed AXFR and knotc agree', async () => {
    const values = [SPF, 'v=verify "quoted" and \\ escaped']
    expect(
      await rfc2136.upsertRecordSet(ZONE, { name: 'example.test', type: 'TXT', ttl: 120, values }),
    ).toEqual({ ok: true, value: undefined })
    const expected = [{ name: 'example.test', type: 'TXT', ttl: 120, values: [...values].sort() }]
    expect(txtValues(await dns('example.test', 'TXT')).sort()).toEqual([...values].sort())
    expect(await rfc2136.readRecords(ZONE, { name: 'example.test', type: 'TXT' })).toEqual({
      ok: true,
      value: expected,
    })
    // Without a type the adapter transfers the zone (AXFR) and filters.
    expect(await rfc2136.readRecords(ZONE, { type: 'TXT' })).toEqual({ ok: true, value: expected })
    // The server's own view: one TXT RR per value, the long one split into 255-byte strings.
    const read = await server.knotc('zone-read', 'example.test', '@', 'TXT')
    const lines = read.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines.every((line) => line.startsWith('[example.test.] example.test. 120 TXT '))).toBe(true)
    expect(read).toContain('"v=verify \\"quoted\\" and \\\\ escaped"')
    expect(read).toContain('include:_spf.example.net ~all"')
    // Each UPDATE that changed something moved the serial on.
    expect(Number(await serial('example.test'))).toBeGreaterThan(1)
  })

  test('a zone transfer spanning many messages is verified message by message (RFC 8945 §5.3.1)', async () => {
    const read = await rfc2136.readRecords({ id: 'second.test', name: 'second.test' }, { type: 'TXT' })
    if (!read.ok) throw new Error(read.failure.message)
    expect(read.value).toHaveLength(1500)
    expect(read.value.find((set) => set.name === 'r1499.second.test')?.values).toEqual([
      `${'v'.repeat(80)}1499`,
    ])
  })

  test('over UDP too; replacing a set and deleting it (deleting twice succeeds)', async () => {
    const udp = provider({ transport: 'udp' })
    const name = 'host.example.test'
    expect(
      kind(await udp.upsertRecordSet(ZONE, { name, type: 'A', ttl: 60, values: ['192.0.2.1', '192.0.2.2'] })),
    ).toBe('ok')
    expect(kind(await udp.upsertRecordSet(ZONE, { name, type: 'A', ttl: 60, values: ['192.0.2.3'] }))).toBe(
      'ok',
    )
    const served = await dns(name, 'A')
    expect(served.status === 'ok' && served.records.map((r) => (r.type === 'A' ? r.address : ''))).toEqual([
      '192.0.2.3',
    ])
    expect(kind(await udp.deleteRecordSet(ZONE, name, 'A'))).toBe('ok')
    expect((await dns(name, 'A')).status).toBe('nxdomain')
    expect(await rfc2136.readRecords(ZONE, { name, type: 'A' })).toEqual({ ok: true, value: [] })
    expect(kind(await udp.deleteRecordSet(ZONE, name, 'A'))).toBe('ok')
  })

  test('MX, AAAA and CNAME round-trip through the wire encoding', async () => {
    const sets = [
      {
        name: 'mail.example.test',
        type: 'MX',
        ttl: 300,
        values: ['10 mx1.example.test', '20 mx2.example.net'],
      },
      { name: 'mail.example.test', type: 'AAAA', ttl: 300, values: ['2001:db8::25', '::ffff:192.0.2.25'] },
      { name: 's1._domainkey.example.test', type: 'CNAME', ttl: 300, values: ['s1.dkim.example.net'] },
    ]
    for (const set of sets) expect(kind(await rfc2136.upsertRecordSet(ZONE, set))).toBe('ok')
    const read = await rfc2136.readRecords(ZONE)
    if (!read.ok) throw new Error(read.failure.message)
    const byKey = (name: string, type: string) => read.value.find((s) => s.name === name && s.type === type)
    expect(byKey('mail.example.test', 'MX')?.values).toEqual(sets[0]!.values)
    expect(byKey('mail.example.test', 'AAAA')?.values).toEqual(['2001:db8::25', '::ffff:c000:219'])
    expect(byKey('s1._domainkey.example.test', 'CNAME')?.values).toEqual(sets[2]!.values)
    expect(byKey('example.test', 'SOA')).toBeDefined()
    expect(await server.knotc('zone-read', 'example.test', 's1._domainkey', 'CNAME')).toContain(
      's1._domainkey.example.test. 300 CNAME s1.dkim.example.net.',
    )
  })

  test('data beside a CNAME, or a CNAME beside data, is a conflict', async () => {
    const alias = 'alias.example.test'
    expect(
      kind(
        await rfc2136.upsertRecordSet(ZONE, { name: alias, type: 'CNAME', ttl: 60, values: ['example.net'] }),
      ),
    ).toBe('ok')
    expect(
      kind(await rfc2136.upsertRecordSet(ZONE, { name: alias, type: 'TXT', ttl: 60, values: ['x'] })),
    ).toBe('conflict')
    const host = 'data.example.test'
    expect(
      kind(await rfc2136.upsertRecordSet(ZONE, { name: host, type: 'TXT', ttl: 60, values: ['x'] })),
    ).toBe('ok')
    expect(
      kind(
        await rfc2136.upsertRecordSet(ZONE, { name: host, type: 'CNAME', ttl: 60, values: ['example.net'] }),
      ),
    ).toBe('conflict')
    expect(txtValues(await dns(host, 'TXT'))).toEqual(['x'])
  })

  test('zones: unconfigured is not_found locally, configured but not served is not_found from the server', async () => {
    const unconfigured = await rfc2136.readRecords({ id: 'other.test', name: 'other.test' })
    expect(unconfigured.ok ? '' : unconfigured.failure.message).toContain('not configured')
    const notServed = provider({ zones: ['not-served.test'] })
    const write = await notServed.upsertRecordSet(
      { id: 'not-served.test', name: 'not-served.test' },
      { name: 'not-served.test', type: 'TXT', ttl: 60, values: ['x'] },
    )
    expect([kind(unconfigured), kind(write)]).toEqual(['not_found', 'not_found'])
  })

  test('writes with the wrong key are refused and change nothing', async () => {
    const before = await serial('example.test')
    const wrong = provider({ key: { ...server.key, secret: server.otherKey.secret } })
    const set = { name: 'example.test', type: 'TXT', ttl: 60, values: ['v=spf1 -all'] }
    expect(kind(await wrong.upsertRecordSet(ZONE, set))).toBe('bad_credentials')
    expect(kind(await provider({ key: server.otherKey }).upsertRecordSet(ZONE, set))).toBe('bad_credentials')
    expect(txtValues(await dns('example.test', 'TXT'))).not.toContain('v=spf1 -all')
    expect(await serial('example.test')).toBe(before)
  })

  test('an unreachable server is unavailable', async () => {
    const down = provider({ server: { host: '127.0.0.1', port: 1 }, timeoutMs: 1000 })
    expect(kind(await down.authenticate())).toBe('unavailable')
  })

  test('TSIG verification of a real signed answer rejects tampering, a foreign request MAC and clock skew', async () => {
    const id = 0x1234
    const now = Date.now() / 1000
    const { wire, mac } = await signMessage(buildQuery(id, 'example.test', TYPE_CODES.SOA!), server.key, now)
    let answer: Buffer = Buffer.alloc(0)
    const outcome = await tcpExchange({ host: '127.0.0.1', port: server.dnsPort }, wire, 3000, (message) => {
      answer = message
      return answers(message, id)
    })
    expect(outcome.kind).toBe('done')
    expect((await verifyAnswer(answer, server.key, mac, now)).status).toBe('verified')

    const tsigAt = readTsig(answer)!.start
    const tampered = Buffer.from(answer)
    tampered[tsigAt - 1]! ^= 0x01 // the last byte of the RR before the TSIG, in the signed part
    expect(await verifyAnswer(tampered, server.key, mac, now)).toMatchObject({
      status: 'failed',
      error: 'BADSIG',
    })
    expect(await verifyAnswer(answer, server.key, Buffer.alloc(32), now)).toMatchObject({ error: 'BADSIG' })
    expect(await verifyAnswer(answer, server.otherKey, mac, now)).toMatchObject({ status: 'failed' })
    expect(await verifyAnswer(answer, server.key, mac, now + 301)).toMatchObject({ error: 'BADTIME' })
    // The same answer with its TSIG RR cut off (ARCOUNT back down) is unsigned.
    const stripped = Buffer.from(answer.subarray(0, tsigAt))
    stripped.writeUInt16BE(stripped.readUInt16BE(10) - 1, 10)
    expect(await verifyAnswer(stripped, server.key, mac, now)).toEqual({ status: 'unsigned' })
  })
})
