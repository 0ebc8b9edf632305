import { describe, expect, test } from 'bun:test'
import { analyzeSpf } from '../../../domain/spf/analysis.ts'
import { checkHost } from '../../../domain/spf/check-host.ts'
import type { SpfWarning } from '../../../domain/spf/warnings.ts'
import { a, memoryDns, mx, TIMEOUT, txt, type Zone } from '../../support/memory-dns.ts'

async function analyze(zone: Zone, domain = 'example.com') {
  return analyzeSpf({ dns: memoryDns(zone) }, { domain })
}

const codes = (analysis: { warnings: { code: string }[] }) => analysis.warnings.map((w) => w.code)

describe('include tree and lookup counting', () => {
  const zone: Zone = {
    'example.com': [txt('v=spf1 mx include:_spf.provider.test include:other.test ip4:192.0.2.0/24 -all')],
    'mail.example.com': [a('192.0.2.25')],
    '_spf.provider.test': [txt('v=spf1 include:a.provider.test include:b.provider.test ~all')],
    'a.provider.test': [txt('v=spf1 ip4:198.51.100.0/24 a:relay.provider.test')],
    'relay.provider.test': [a('203.0.113.9')],
    'b.provider.test': [txt('v=spf1 ip6:2001:db8:b::/48 redirect=c.provider.test')],
    'c.provider.test': [txt('v=spf1 ip4:203.0.113.0/24 -all')],
    'other.test': [txt('v=spf1 exists:%{i}.allow.other.test -all')],
  }
  zone['example.com']!.push(mx(10, 'mail.example.com'))

  test('every branch has its own cost and the total cost', async () => {
    const analysis = await analyze(zone)
    expect(analysis.lookups).toBe(8)
    expect(analysis.tree).toMatchObject({ domain: 'example.com', lookups: 3, branchLookups: 8 })
    const [provider, other] = analysis.tree.children
    expect(provider).toMatchObject({
      domain: '_spf.provider.test',
      via: 'include',
      lookups: 2,
      branchLookups: 4,
      // a:relay.provider.test has no AAAA: void for IPv6 clients.
      voidLookups: 1,
    })
    expect(provider!.children.map((c) => [c.domain, c.lookups, c.branchLookups])).toEqual([
      ['a.provider.test', 1, 1],
      ['b.provider.test', 1, 1],
    ])
    expect(provider!.children[1]!.children[0]).toMatchObject({ domain: 'c.provider.test', via: 'redirect' })
    expect(other).toMatchObject({ domain: 'other.test', term: 'include:other.test', lookups: 1 })
    expect(analysis.warnings.filter((w) => w.severity === 'error')).toEqual([])
  })

  test('the count matches what check_host really evaluates for an unlisted sender', async () => {
    const analysis = await analyze(zone)
    const result = await checkHost(
      { dns: memoryDns(zone) },
      { ip: '10.9.9.9', domain: 'example.com', sender: 'x@example.com', helo: 'h', now: new Date(0) },
    )
    expect(result.result).toBe('fail')
    expect(result.lookups).toBe(analysis.lookups)
  })

  test('more than 10 lookups is reported, with the worst branch visible', async () => {
    const big: Zone = { 'example.com': [txt('v=spf1 include:p.test -all')] }
    big['p.test'] = [txt(`v=spf1 ${Array.from({ length: 10 }, (_, i) => `a:h${i}.p.test`).join(' ')}`)]
    for (let i = 0; i < 10; i++) big[`h${i}.p.test`] = [a(`198.51.100.${i}`)]
    const analysis = await analyze(big)
    expect(analysis.lookups).toBe(11)
    expect(codes(analysis)).toContain('lookup_limit_exceeded')
    expect(analysis.tree.children[0]!.branchLookups).toBe(10)
  })

  test('include loops are cut and reported', async () => {
    const analysis = await analyze({
      'example.com': [txt('v=spf1 include:loop.test -all')],
      'loop.test': [txt('v=spf1 include:example.com')],
    })
    expect(analysis.tree.children[0]!.children[0]).toMatchObject({ domain: 'example.com', status: 'loop' })
    expect(codes(analysis)).toEqual(expect.arrayContaining(['include_loop', 'lookup_limit_exceeded']))
  })

  test('void lookups: worst case over IPv4 and IPv6 clients', async () => {
    const analysis = await analyze({
      'example.com': [txt('v=spf1 a:v4only.test a:gone1.test a:gone2.test -all')],
      'v4only.test': [a('192.0.2.1')],
    })
    expect(analysis.voidLookups).toBe(3)
    expect(codes(analysis)).toContain('void_lookup_limit_exceeded')
    expect(analysis.warnings.filter((w) => w.code === 'void_lookup').map((w) => w.term)).toEqual([
      'a:v4only.test',
      'a:gone1.test',
      'a:gone2.test',
    ])
  })
})

describe('warnings', () => {
  const cases: [string, Zone, SpfWarning['severity']][] = [
    ['all_pass', { 'example.com': [txt('v=spf1 +all')] }, 'error'],
    ['all_neutral', { 'example.com': [txt('v=spf1 ip4:192.0.2.1 ?all')] }, 'warning'],
    ['no_all', { 'example.com': [txt('v=spf1 ip4:192.0.2.1')] }, 'warning'],
    ['ptr_used', { 'example.com': [txt('v=spf1 ptr -all')] }, 'warning'],
    ['multiple_records', { 'example.com': [txt('v=spf1 -all'), txt('v=spf1 ~all')] }, 'error'],
    ['syntax_error', { 'example.com': [txt('v=spf1 ip4:192.0.2.300 -all')] }, 'error'],
    ['no_record', { 'example.com': [txt('hello')] }, 'error'],
    ['dns_error', { 'example.com': [TIMEOUT] }, 'warning'],
    ['include_not_found', { 'example.com': [txt('v=spf1 include:gone.test -all')] }, 'error'],
    ['redirect_not_found', { 'example.com': [txt('v=spf1 redirect=gone.test')] }, 'error'],
    ['redirect_ignored', { 'example.com': [txt('v=spf1 -all redirect=x.test')] }, 'warning'],
    ['unknown_modifier', { 'example.com': [txt('v=spf1 -all foo=bar')] }, 'info'],
    [
      'mx_limit_exceeded',
      {
        'example.com': [txt('v=spf1 mx -all'), ...Array.from({ length: 11 }, (_, i) => mx(i, `m${i}.test`))],
      },
      'error',
    ],
    ['record_too_long', { 'example.com': [txt(`v=spf1 ${'ip4:192.0.2.1 '.repeat(40)}-all`)] }, 'warning'],
  ]
  for (const [code, zone, severity] of cases) {
    test(code, async () => {
      const warning = (await analyze(zone)).warnings.find((w) => w.code === code)
      expect(warning).toBeDefined()
      expect(warning!.severity).toBe(severity)
      expect(warning!.domain).toBe('example.com')
      expect(warning!.message.length).toBeGreaterThan(10)
    })
  }

  test('a clean record has no warnings', async () => {
    const analysis = await analyze({ 'example.com': [txt('v=spf1 ip4:192.0.2.0/24 -all')] })
    expect(analysis.warnings).toEqual([])
  })

  test('+all inside an include is reported against the included domain', async () => {
    const analysis = await analyze({
      'example.com': [txt('v=spf1 include:lax.test -all')],
      'lax.test': [txt('v=spf1 +all')],
    })
    expect(analysis.warnings).toContainEqual(
      expect.objectContaining({ code: 'all_pass', domain: 'lax.test' }),
    )
  })
})

describe('duplicate and overlapping networks', () => {
  test('across records, with their sources', async () => {
    const analysis = await analyze({
      'example.com': [
        txt('v=spf1 ip4:192.0.2.0/24 ip4:192.0.2.128/25 include:p.test a -all'),
        a('192.0.2.7'),
      ],
      'p.test': [txt('v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 ip6:2001:db8:1::/48')],
    })
    expect(analysis.overlaps).toEqual([
      {
        kind: 'duplicate',
        network: { network: '192.0.2.0/24', domain: 'p.test', term: 'ip4:192.0.2.0/24' },
        within: { network: '192.0.2.0/24', domain: 'example.com', term: 'ip4:192.0.2.0/24' },
      },
      {
        kind: 'contained',
        network: { network: '192.0.2.7', domain: 'example.com', term: 'a' },
        within: { network: '192.0.2.0/24', domain: 'p.test', term: 'ip4:192.0.2.0/24' },
      },
      {
        kind: 'contained',
        network: { network: '192.0.2.128/25', domain: 'example.com', term: 'ip4:192.0.2.128/25' },
        within: { network: '192.0.2.0/24', domain: 'p.test', term: 'ip4:192.0.2.0/24' },
      },
      {
        kind: 'contained',
        network: { network: '2001:db8:1::/48', domain: 'p.test', term: 'ip6:2001:db8:1::/48' },
        within: { network: '2001:db8::/32', domain: 'p.test', term: 'ip6:2001:db8::/32' },
      },
    ])
    expect(codes(analysis).filter((c) => c.endsWith('_network'))).toEqual([
      'duplicate_network',
      'overlapping_network',
      'overlapping_network',
      'overlapping_network',
    ])
  })
})
