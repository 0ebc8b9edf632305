// planManagedRecord against a real loopback DNS server through the project's wire resolver, and the
// records it produces served back and evaluated with check_host(): the hosted record must pass
// exactly the senders it was built from, within the lookup limit counted from the user's domain.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { Failure } from '../../../domain/shared/result.ts'
import { splitTxtStrings } from '../../../domain/spf/chain.ts'
import { checkHost } from '../../../domain/spf/check-host.ts'
import {
  candidateRecord,
  type HostedRecords,
  type ManagedSource,
  type ManagedSpfConfig,
  planManagedRecord,
  userRecordWithInclude,
} from '../../../domain/spf-management/managed-record.ts'
import { createDnsPacketResolver } from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { type DnsTestServer, startDnsServer, type Zone, type ZoneRecord } from '../../support/dns-server.ts'

const ZONE = 'spf.dmarcwatch.test'
const DOMAIN = 'customer.test'
const HOSTED = `customer-test.${ZONE}`

const spf = (text: string): ZoneRecord => ({ type: 'TXT', data: splitTxtStrings(text) })
const nets = (from: number) => Array.from({ length: 30 }, (_, i) => `ip4:198.18.${from + i}.0/24`).join(' ')

const zone: Zone = {
  // 1 lookup: the include.
  'spf.mailer-a.test': [spf('v=spf1 ip4:198.51.100.0/24 -all')],
  // 3 lookups: the include and two nested ones.
  'spf.mailer-b.test': [spf('v=spf1 include:n1.mailer-b.test include:n2.mailer-b.test -all')],
  'n1.mailer-b.test': [spf('v=spf1 ip4:203.0.113.0/25 -all')],
  'n2.mailer-b.test': [spf('v=spf1 ip6:2001:db8:b::/48 -all')],
  // 3 lookups: the include, a and mx.
  'spf.mailer-c.test': [spf('v=spf1 a:out.mailer-c.test mx:mailer-c.test ~all')],
  'out.mailer-c.test': [{ type: 'A', data: '192.0.2.33' }],
  'mailer-c.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx.mailer-c.test' } }],
  'mx.mailer-c.test': [{ type: 'A', data: '192.0.2.34' }],
  // 2 lookups.
  'spf.mailer-d.test': [spf('v=spf1 include:_n.mailer-d.test -all')],
  '_n.mailer-d.test': [spf('v=spf1 ip4:192.0.2.200/29 -all')],
  // 4 lookups and 90 networks: too many for one 512-byte record.
  'spf.bulk.test': [spf('v=spf1 include:a.bulk.test include:b.bulk.test include:c.bulk.test -all')],
  'a.bulk.test': [spf(`v=spf1 ${nets(0)} -all`)],
  'b.bulk.test': [spf(`v=spf1 ${nets(30)} -all`)],
  'c.bulk.test': [spf(`v=spf1 ${nets(60)} -all`)],
  'relay.customer.test': [{ type: 'A', data: '192.0.2.55' }],
  'customer.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx1.customer.test' } }],
  'mx1.customer.test': [
    { type: 'A', data: '192.0.2.60' },
    { type: 'AAAA', data: '2001:db8:60::1' },
  ],
  'loopy.test': [spf(`v=spf1 include:${HOSTED} -all`)],
  'nospf.test': [{ type: 'A', data: '192.0.2.99' }],
  'broken.test': [spf('v=spf1 ip4:192.0.2.98 -all')],
}

// 9 lookups: with the user's include:<hosted>, exactly the limit of 10.
const nine: ManagedSource[] = [
  { kind: 'include', domain: 'spf.mailer-a.test', label: 'Mailer A' },
  { kind: 'ip4', network: '192.0.2.10' },
  { kind: 'include', domain: 'spf.mailer-b.test' },
  { kind: 'include', domain: 'spf.mailer-c.test' },
  { kind: 'a', domain: 'relay.customer.test' },
  { kind: 'mx', domain: 'customer.test' },
  { kind: 'ip6', network: '2001:db8:1::/64' },
]
const eleven: ManagedSource[] = [...nine, { kind: 'include', domain: 'spf.mailer-d.test' }]
// One address of each source; 192.0.2.34 is reached through mailer-c's mx.
const senders = [
  '198.51.100.7',
  '192.0.2.10',
  '203.0.113.9',
  '2001:db8:b::1',
  '192.0.2.33',
  '192.0.2.34',
  '192.0.2.55',
  '192.0.2.60',
  '2001:db8:60::1',
  '2001:db8:1::5',
]
const strangers = ['203.0.113.200', '192.0.2.11', '2001:db8:ffff::1']

const config = (
  sources: ManagedSource[],
  flatten: ManagedSpfConfig['flatten'] = 'auto',
): ManagedSpfConfig => ({
  sources,
  all: '-all',
  flatten,
})

let server: DnsTestServer
let dns: ReturnType<typeof createDnsPacketResolver>

beforeAll(async () => {
  server = await startDnsServer(zone)
  dns = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: server.port }], timeoutMs: 1000 })
})
afterAll(() => server.stop())
beforeEach(() => {
  server.setZone(zone)
  server.reset()
})

async function plan(sources: ManagedSource[], flatten: ManagedSpfConfig['flatten'] = 'auto', outside = 0) {
  const input = { domain: DOMAIN, zone: ZONE, config: config(sources, flatten), outsideLookups: outside }
  return planManagedRecord({ dns }, input)
}

async function planned(sources: ManagedSource[], flatten: ManagedSpfConfig['flatten'] = 'auto') {
  const result = await plan(sources, flatten)
  if (!result.ok) throw new Error(JSON.stringify(result.failure))
  return result.value
}

const failureOf = (result: { ok: boolean; failure?: Failure }) => (result.ok ? null : result.failure)

/** Serves the hosted records and the user's record, then runs check_host() from the user's domain. */
async function evaluate(records: HostedRecords, ips: string[]) {
  for (const record of records.records) server.set(record.name, 'TXT', [{ data: record.strings }])
  const user = userRecordWithInclude(null, HOSTED).record
  server.set(DOMAIN, 'TXT', [{ data: splitTxtStrings(user) }])
  const input = { domain: DOMAIN, sender: `postmaster@${DOMAIN}`, helo: `mail.${DOMAIN}`, now: new Date(0) }
  return Promise.all(ips.map((ip) => checkHost({ dns }, { ...input, ip })))
}

function expectFits(records: HostedRecords) {
  for (const record of records.records) {
    expect(record.strings.join('')).toBe(record.text)
    expect(record.strings.every((s) => new TextEncoder().encode(s).length <= 255)).toBe(true)
    // RFC 7208 §3.4: the RDATA (each string plus its length octet) within 512 bytes.
    expect(record.text.length + record.strings.length).toBeLessThan(512)
  }
}

describe('planning against a real DNS server', () => {
  test('9 lookups stay unflattened: one record, network sources first, 10 lookups from the user domain', async () => {
    const hosted = await planned(nine)
    expect(hosted).toMatchObject({ lookups: 9, flattened: false, networks: 2 })
    expect(hosted.records).toEqual([
      { name: HOSTED, text: candidateRecord(config(nine)), strings: [candidateRecord(config(nine))] },
    ])
    expect(hosted.records[0]!.text).toBe(
      'v=spf1 ip4:192.0.2.10 ip6:2001:db8:1::/64 include:spf.mailer-a.test include:spf.mailer-b.test include:spf.mailer-c.test a:relay.customer.test mx:customer.test -all',
    )
    const passes = await evaluate(hosted, senders)
    expect(passes.map((r) => r.result)).toEqual(senders.map(() => 'pass'))
    // The mx source is the last term: reaching it costs every lookup, and exactly the limit.
    expect(passes[senders.indexOf('192.0.2.60')]!.lookups).toBe(10)
    const fails = await evaluate(hosted, strangers)
    expect(fails.map((r) => r.result)).toEqual(strangers.map(() => 'fail'))
  })

  test("11 lookups with flatten 'never' are refused: 12 counted from the user's domain", async () => {
    expect(failureOf(await plan(eleven, 'never'))).toEqual({
      code: 'spf_lookup_limit_exceeded',
      lookups: 12,
      limit: 10,
    })
    // The user's other lookups come out of the same budget of 10.
    expect(failureOf(await plan(nine, 'never', 1))).toEqual({
      code: 'spf_lookup_limit_exceeded',
      lookups: 11,
      limit: 10,
    })
  })

  test("'auto' flattens 11 lookups to networks that pass exactly the same senders", async () => {
    const hosted = await planned(eleven)
    expect(hosted).toMatchObject({ flattened: true, lookups: 0 })
    expect(hosted.records).toHaveLength(1)
    expect(hosted.records[0]!.text).not.toContain('include:')
    expect(hosted.caveats.some((c) => c.includes('re-plan'))).toBe(true)
    expectFits(hosted)
    const passes = await evaluate(hosted, [...senders, '192.0.2.203'])
    expect(passes.map((r) => r.result)).toEqual([...senders, '192.0.2.203'].map(() => 'pass'))
    expect(passes.every((r) => r.lookups === 1)).toBe(true)
    const fails = await evaluate(hosted, strangers)
    expect(fails.map((r) => r.result)).toEqual(strangers.map(() => 'fail'))
  })

  test('a flattened policy too big for one answer is chained under the hosted name, every record fitting', async () => {
    const sources: ManagedSource[] = [...eleven, { kind: 'include', domain: 'spf.bulk.test' }]
    expect(failureOf(await plan(sources, 'never'))).toMatchObject({ lookups: 16 })
    const hosted = await planned(sources)
    expect(hosted.flattened).toBe(true)
    expect(hosted.networks).toBe(101)
    expect(hosted.records.length).toBeGreaterThan(2)
    expect(hosted.lookups).toBe(hosted.records.length - 1)
    expectFits(hosted)
    const [root, ...chained] = hosted.records
    expect(root!.name).toBe(HOSTED)
    chained.forEach((record, i) => {
      expect(record.name).toBe(`_spf${i + 1}.${HOSTED}`)
      expect(root!.text).toContain(`include:${record.name}`)
    })
    const ips = [...senders, '198.18.0.1', '198.18.45.200', '198.18.89.254']
    expect((await evaluate(hosted, ips)).map((r) => r.result)).toEqual(ips.map(() => 'pass'))
    const others = [...strangers, '198.18.90.1']
    expect((await evaluate(hosted, others)).map((r) => r.result)).toEqual(others.map(() => 'fail'))
  })

  test("'always' flattens under the limit too; a source whose DNS fails is kept as written", async () => {
    server.behave('broken.test', { rcode: 'SERVFAIL' })
    const sources: ManagedSource[] = [
      ...nine,
      { kind: 'include', domain: 'broken.test' },
      { kind: 'include', domain: '%{ir}._ip.mailer-e.test' },
    ]
    const hosted = await planned(sources, 'always')
    expect(hosted.flattened).toBe(true)
    const text = hosted.records[0]!.text
    expect(text).toContain(' include:broken.test include:%{ir}._ip.mailer-e.test -all')
    expect(text).not.toContain('mailer-a')
    expect(hosted.lookups).toBe(2)
    expect(hosted.caveats.join('\n')).toContain("'include:broken.test' is kept as written")
    expect(hosted.caveats.join('\n')).toContain('SERVFAIL')
  })

  test('an include that leads back to the hosted record is a loop and is refused', async () => {
    const result = await plan([
      { kind: 'ip4', network: '192.0.2.1' },
      { kind: 'include', domain: 'loopy.test' },
    ])
    const failure = failureOf(result)
    expect(failure).toMatchObject({ code: 'validation_failed' })
    if (failure?.code !== 'validation_failed') return
    expect(failure.errors['sources[1].domain']![0]).toContain('loop')
  })

  test('an include of a domain without an SPF record is refused: it would be a permerror', async () => {
    const failure = failureOf(await plan([...nine, { kind: 'include', domain: 'nospf.test' }]))
    if (failure?.code !== 'validation_failed') throw new Error('expected validation_failed')
    expect(failure.errors).toEqual({
      'sources[7].domain': [
        'nospf.test has no SPF record (no TXT records): include:nospf.test would be a permerror (RFC 7208 §5.2)',
      ],
    })
  })

  test('invalid sources are refused before any DNS question is asked', async () => {
    const failure = failureOf(await plan([{ kind: 'include', domain: `x.${ZONE}` }]))
    expect(failure).toMatchObject({ code: 'validation_failed' })
    expect(server.queries).toEqual([])
  })
})
