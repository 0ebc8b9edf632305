import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import * as packet from 'dns-packet'
import type { DnsResolver } from '../../../domain/dns/ports.ts'
import { checkHost } from '../../../domain/spf/check-host.ts'
import {
  type AuthoritativeResponder,
  type HostedRecordSet,
  startAuthoritativeResponder,
} from '../../../infrastructure/dns/authoritative-responder.ts'
import {
  createDnsPacketResolver,
  type DnsPacketResolverOptions,
} from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { type DnsTestServer, soa, startDnsServer } from '../../support/dns-server.ts'
import { query, udpExchange } from '../../support/raw-dns-client.ts'

const ZONE = 'spf.dmarcwatch.example'
// 60 ip4 terms (~1000 bytes) before the one the SPF test checks, so it sits past several 255-byte cuts.
const longSpf = `v=spf1 ${Array.from({ length: 60 }, (_, i) => `ip4:198.51.100.${i}`).join(' ')} ip4:203.0.113.7 -all`
// 'é' is two bytes: placed across byte 255 it must not be cut in half.
const utf8Txt = `${'a'.repeat(254)}é${'b'.repeat(10)}`
const records: Record<string, HostedRecordSet> = {
  [`acme.${ZONE}`]: { txt: ['v=spf1 ip4:192.0.2.0/24 -all'] },
  [`long.${ZONE}`]: { txt: [longSpf] },
  [`utf8.${ZONE}`]: { txt: [utf8Txt] },
  // Three 500-byte records: more than 1232 bytes together, so even EDNS0 UDP truncates.
  [`huge.${ZONE}`]: { txt: ['x', 'y', 'z'].map((c) => `v=test ${c.repeat(493)}`) },
  // An empty non-terminal or a name with other data: it exists, without TXT (RFC 8020).
  [`_dmarc.${ZONE}`]: { txt: [] },
}
const looked: string[] = []
const warnings: { msg: string; fields?: object }[] = []

let responder: AuthoritativeResponder
let external: DnsTestServer
const resolver = (options: DnsPacketResolverOptions = {}) =>
  createDnsPacketResolver({
    servers: [{ host: '127.0.0.1', port: responder.port }],
    timeoutMs: 1000,
    ...options,
  })

beforeAll(async () => {
  responder = await startAuthoritativeResponder({
    host: '127.0.0.1',
    port: 0,
    zone: `${ZONE}.`,
    nameservers: ['ns1.dmarcwatch.example', 'ns2.dmarcwatch.example'],
    hostmaster: 'hostmaster@dmarcwatch.example',
    ttl: 300,
    negativeTtl: 60,
    lookupTimeoutMs: 200,
    lookup: async (name) => {
      looked.push(name)
      if (name === `boom.${ZONE}`) throw new Error('database unavailable')
      if (name === `hang.${ZONE}`) return new Promise(() => {})
      if (name === `bad.${ZONE}`) return { txt: 'v=spf1 -all' } as unknown as HostedRecordSet
      return records[name] ?? null
    },
    logger: { warn: (msg, fields) => warnings.push({ msg, fields }) },
  })
  external = await startDnsServer({
    'customer.test': [soa(60), { type: 'TXT', data: `v=spf1 include:long.${ZONE} -all` }],
  })
})
afterAll(async () => {
  await Promise.all([responder.close(), external.stop()])
})
beforeEach(() => {
  looked.length = 0
  warnings.length = 0
})

describe('answers', () => {
  test('a hosted TXT record, authoritative, through the project resolver', async () => {
    expect(await resolver().resolve(`acme.${ZONE}`, 'TXT')).toEqual({
      status: 'ok',
      authenticated: false,
      records: [{ type: 'TXT', strings: ['v=spf1 ip4:192.0.2.0/24 -all'], ttl: 300 }],
    })
    const reply = await udpExchange(responder.port, query(`acme.${ZONE}`, 'TXT', { flags: 0x0100 }))
    expect(reply).toMatchObject({ rcode: 'NOERROR', flag_aa: true, flag_ra: false, flag_rd: true, id: 4242 })
    expect(looked).toEqual([`acme.${ZONE}`, `acme.${ZONE}`])
  })

  test('a record over 255 bytes is one RR of 255-byte strings that the resolver joins back', async () => {
    const answer = await resolver().resolve(`long.${ZONE}`, 'TXT')
    expect(answer.status).toBe('ok')
    const record = answer.status === 'ok' ? answer.records : []
    expect(record).toHaveLength(1)
    const strings = record[0]?.type === 'TXT' ? record[0].strings : []
    expect(strings.map((s) => Buffer.byteLength(s))).toEqual([255, 255, 255, 255, longSpf.length - 1020])
    expect(strings.join('')).toBe(longSpf)
  })

  test('a split never cuts a UTF-8 character in two', async () => {
    const answer = await resolver().resolve(`utf8.${ZONE}`, 'TXT')
    expect(answer).toMatchObject({
      status: 'ok',
      records: [{ strings: ['a'.repeat(254), `é${'b'.repeat(10)}`] }],
    })
  })

  test('the apex answers SOA and NS from the options', async () => {
    expect(await resolver().resolve(ZONE, 'NS')).toMatchObject({
      status: 'ok',
      records: [
        { type: 'NS', target: 'ns1.dmarcwatch.example', ttl: 300 },
        { type: 'NS', target: 'ns2.dmarcwatch.example', ttl: 300 },
      ],
    })
    const reply = await udpExchange(responder.port, query(ZONE, 'SOA'))
    expect(reply?.flag_aa).toBe(true)
    expect(reply?.answers).toEqual([
      expect.objectContaining({
        name: ZONE,
        type: 'SOA',
        ttl: 300,
        data: expect.objectContaining({
          mname: 'ns1.dmarcwatch.example',
          rname: 'hostmaster.dmarcwatch.example',
          minimum: 60,
        }),
      }),
    ])
    // Nothing else lives at the apex: TXT is NODATA, not NXDOMAIN.
    expect(await resolver().resolve(ZONE, 'TXT')).toEqual({ status: 'nodata', ttl: 60 })
  })

  test('ANY gets the TXT RRset only (RFC 8482), and the SOA at the apex', async () => {
    const reply = await udpExchange(responder.port, query(`acme.${ZONE}`, 'ANY'))
    expect(reply?.answers?.map((a) => a.type)).toEqual(['TXT'])
    const apex = await udpExchange(responder.port, query(ZONE, 'ANY'))
    expect(apex?.answers?.map((a) => a.type)).toEqual(['SOA'])
  })

  test('names are case-insensitive and the reply echoes the question as asked (0x20)', async () => {
    const mixed = 'AcMe.SpF.DmarcWATCH.eXample'
    const reply = await udpExchange(responder.port, query(mixed, 'TXT'))
    expect(reply?.questions?.[0]?.name).toBe(mixed)
    expect(reply?.answers?.[0]).toMatchObject({ name: mixed, type: 'TXT' })
    expect(looked).toEqual([`acme.${ZONE}`])
  })
})

describe('negative answers', () => {
  test('an unknown name is NXDOMAIN with the SOA; the negative TTL is the SOA minimum (RFC 2308)', async () => {
    expect(await resolver().resolve(`nobody.${ZONE}`, 'TXT')).toEqual({ status: 'nxdomain', ttl: 60 })
    const reply = await udpExchange(responder.port, query(`Nobody.${ZONE}`, 'TXT'))
    expect(reply).toMatchObject({ rcode: 'NXDOMAIN', flag_aa: true, answers: [] })
    expect(reply?.authorities).toEqual([
      expect.objectContaining({
        type: 'SOA',
        name: ZONE,
        ttl: 60,
        data: expect.objectContaining({ minimum: 60 }),
      }),
    ])
  })

  test('an existing name without the type is NODATA with the SOA', async () => {
    expect(await resolver().resolve(`acme.${ZONE}`, 'A')).toEqual({ status: 'nodata', ttl: 60 })
    expect(await resolver().resolve(`_dmarc.${ZONE}`, 'TXT')).toEqual({ status: 'nodata', ttl: 60 })
    const reply = await udpExchange(responder.port, query(`acme.${ZONE}`, 'MX'))
    expect(reply).toMatchObject({ rcode: 'NOERROR', flag_aa: true, answers: [] })
    expect(reply?.authorities?.map((a) => a.type)).toEqual(['SOA'])
  })

  test('names outside the zone are REFUSED without authority and without a lookup', async () => {
    for (const name of ['example.com', 'dmarcwatch.example', `evil${ZONE}`]) {
      const reply = await udpExchange(responder.port, query(name, 'TXT'))
      expect(reply).toMatchObject({ rcode: 'REFUSED', flag_aa: false, answers: [], authorities: [] })
    }
    // One label "acme.spf" (a dot inside it) is not the two labels acme and spf.
    const name = Buffer.from('\x08acme.spf\x0admarcwatch\x07example\x00', 'latin1')
    const raw = Buffer.concat([
      Buffer.from([0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
      name,
      Buffer.from([0, 16, 0, 1]),
    ])
    expect(await udpExchange(responder.port, raw)).toMatchObject({ rcode: 'REFUSED', id: 7 })
    // A zone transfer is refused too.
    expect(await udpExchange(responder.port, query(ZONE, 'AXFR'))).toMatchObject({ rcode: 'REFUSED' })
    expect(looked).toEqual([])
  })
})

describe('failures', () => {
  test('a lookup that throws is SERVFAIL and logged; the responder keeps serving', async () => {
    expect(await resolver().resolve(`boom.${ZONE}`, 'TXT')).toEqual({
      status: 'error',
      reason: 'server answered SERVFAIL',
    })
    expect(warnings).toEqual([
      {
        msg: 'hosted DNS lookup failed',
        fields: { name: `boom.${ZONE}`, error: 'Error: database unavailable' },
      },
    ])
    expect(await resolver().resolve(`acme.${ZONE}`, 'TXT')).toMatchObject({ status: 'ok' })
  })

  test('a lookup that hangs or returns garbage is SERVFAIL too', async () => {
    const started = performance.now()
    expect(await udpExchange(responder.port, query(`hang.${ZONE}`, 'TXT'))).toMatchObject({
      rcode: 'SERVFAIL',
    })
    expect(performance.now() - started).toBeGreaterThanOrEqual(190)
    expect(await udpExchange(responder.port, query(`bad.${ZONE}`, 'TXT'))).toMatchObject({
      rcode: 'SERVFAIL',
    })
    expect(warnings).toHaveLength(2)
  })

  test('garbage and responses get no reply; the next query does', async () => {
    expect(await udpExchange(responder.port, Buffer.from([1, 2, 3, 4, 5]), 200)).toBeNull()
    const cut = query(`acme.${ZONE}`, 'TXT').subarray(0, 20)
    expect(await udpExchange(responder.port, cut, 200)).toBeNull()
    // A response (QR=1) is never answered, or two servers could bounce messages forever.
    const response = packet.encode({
      type: 'response',
      id: 5,
      questions: [{ name: `acme.${ZONE}`, type: 'TXT' }],
    })
    expect(await udpExchange(responder.port, response, 200)).toBeNull()
    expect(await udpExchange(responder.port, query(`acme.${ZONE}`, 'TXT'))).toMatchObject({
      rcode: 'NOERROR',
    })
  })

  test('other opcodes are NOTIMP, two questions FORMERR, EDNS version 1 BADVERS', async () => {
    const notify = query(ZONE, 'SOA', { flags: 4 << 11 })
    expect(await udpExchange(responder.port, notify)).toMatchObject({ rcode: 'NOTIMP', opcode: 'NOTIFY' })
    const questions = [`acme.${ZONE}`, ZONE].map(
      (name) => ({ name, type: 'TXT', class: 'IN' }) as packet.Question,
    )
    const two = packet.encode({ type: 'query', id: 9, questions })
    expect(await udpExchange(responder.port, two)).toMatchObject({ rcode: 'FORMERR', id: 9, questions: [] })
    const v1 = await udpExchange(responder.port, query(`acme.${ZONE}`, 'TXT', { edns: 1232, ednsVersion: 1 }))
    // RCODE 16 = 1 in the OPT's upper bits and 0 in the header (RFC 6891 §6.1.3).
    expect(v1).toMatchObject({ rcode: 'NOERROR', answers: [] })
    expect(v1?.additionals).toEqual([
      expect.objectContaining({ type: 'OPT', extendedRcode: 1, ednsVersion: 0 }),
    ])
  })
})

describe('SPF evaluation against the hosted record', () => {
  // A customer's own record (elsewhere) includes the hosted name; names in the hosted zone go to
  // the responder, like a resolver that follows the delegation would send them.
  const routed = (): DnsResolver => {
    const hosted = resolver()
    const elsewhere = createDnsPacketResolver({
      servers: [{ host: '127.0.0.1', port: external.port }],
      timeoutMs: 1000,
    })
    return {
      resolve: (name, type) =>
        (name.toLowerCase().endsWith(`.${ZONE}`) ? hosted : elsewhere).resolve(name, type),
    }
  }
  const input = {
    domain: 'customer.test',
    sender: 'bounce@customer.test',
    helo: 'mx.customer.test',
    now: new Date(),
  }

  test('an IP listed in the hosted record (past the 255-byte cuts) passes, another fails', async () => {
    const dns = routed()
    expect(await checkHost({ dns }, { ...input, ip: '203.0.113.7' })).toMatchObject({
      result: 'pass',
      mechanism: `include:long.${ZONE}`,
      lookups: 1,
    })
    expect(await checkHost({ dns }, { ...input, ip: '198.51.100.59' })).toMatchObject({ result: 'pass' })
    expect(await checkHost({ dns }, { ...input, ip: '192.0.2.99' })).toMatchObject({
      result: 'fail',
      mechanism: '-all',
    })
  })

  test('checked directly against the responder, the hosted name is an SPF domain of its own', async () => {
    const dns = resolver()
    const direct = { ...input, domain: `acme.${ZONE}` }
    expect(await checkHost({ dns }, { ...direct, ip: '192.0.2.10' })).toMatchObject({ result: 'pass' })
    expect(await checkHost({ dns }, { ...direct, ip: '198.51.100.1' })).toMatchObject({ result: 'fail' })
    expect(await checkHost({ dns }, { ...direct, domain: `nobody.${ZONE}`, ip: '192.0.2.10' })).toMatchObject(
      {
        result: 'none',
      },
    )
  })
})
