import { expect, test } from 'bun:test'
import type { DnsRecord } from '../../../domain/dns/ports.ts'
import { spfIncludeEvidence, topLevelIncludes } from '../../../domain/sources/spf-evidence.ts'
import { resolveSpfTree } from '../../../domain/spf/include-tree.ts'
import { memoryDns, type Zone } from '../../support/memory-dns.ts'

// Which includes of the published SPF record authorise an IP, read from the resolved include tree.

const txt = (text: string): DnsRecord => ({ type: 'TXT', strings: [text], ttl: 300 })
const a = (address: string): DnsRecord => ({ type: 'A', address, ttl: 300 })

const zone: Zone = {
  'example.test': [
    txt(
      'v=spf1 ip4:192.0.2.1 include:_spf.google.com include:own.example.test -include:blocked.test include:broken.test ~all',
    ),
  ],
  '_spf.google.com': [txt('v=spf1 include:_netblocks.google.com ~all')],
  '_netblocks.google.com': [txt('v=spf1 ip4:74.125.0.0/16 ip6:2a00:1450:4000::/36 ~all')],
  // The owner's own record nests a provider (as a hosted or hand-written chain would), with a
  // carve-out before it, an a: term and a term evaluation cannot decide here.
  'own.example.test': [
    txt('v=spf1 -ip4:149.72.9.0/24 exists:%{i}.rbl.test include:sendgrid.net a:relay.example.test/30 -all'),
  ],
  'sendgrid.net': [txt('v=spf1 ip4:149.72.0.0/16 -all')],
  'relay.example.test': [a('198.51.100.5')],
  'blocked.test': [txt('v=spf1 ip4:203.0.113.0/24 -all')],
  'broken.test': [txt('v=spf1 ip4:203.0.113.0/24 bogus:term -all')],
  'redirected.test': [txt('v=spf1 include:mx.example.test redirect=example.test')],
  'mx.example.test': [
    txt('v=spf1 mx -all'),
    { type: 'MX', preference: 10, exchange: 'mail.example.test', ttl: 300 },
  ],
  'mail.example.test': [a('192.0.2.77')],
}

const evidenceFor = async (domain: string) =>
  spfIncludeEvidence(await resolveSpfTree({ dns: memoryDns(zone) }, domain))

test('an IP authorised by a top-level include names it, and the includes it passed through', async () => {
  const includes = await evidenceFor('example.test')
  expect(includes('74.125.1.2')).toEqual(['_spf.google.com', '_netblocks.google.com'])
  expect(includes('2a00:1450:4001::5')).toEqual(['_spf.google.com', '_netblocks.google.com'])
  // IPv4-mapped IPv6 is matched as IPv4 (RFC 7208 §5).
  expect(includes('::ffff:74.125.1.2')).toEqual(['_spf.google.com', '_netblocks.google.com'])
  expect(includes('149.72.1.1')).toEqual(['own.example.test', 'sendgrid.net'])
})

test('a/mx terms match through their resolved addresses, with the cidr length applied', async () => {
  const includes = await evidenceFor('example.test')
  expect(includes('198.51.100.6')).toEqual(['own.example.test'])
  expect(includes('198.51.100.9')).toEqual([])
})

test('order and qualifiers inside a branch decide; errors, -include and the root’s own terms give nothing', async () => {
  const includes = await evidenceFor('example.test')
  // -ip4 comes first in own.example.test: that branch fails for this range.
  expect(includes('149.72.9.9')).toEqual([])
  // Matched by the root's ip4 only: no include authorised it.
  expect(includes('192.0.2.1')).toEqual([])
  // -include: a match there would fail the IP; a syntax error is a permerror, never a pass.
  expect(includes('203.0.113.5')).toEqual([])
  expect(includes('not an ip')).toEqual([])
  expect(spfIncludeEvidence(null)('74.125.1.2')).toEqual([])
})

test('a redirect at the root makes the target’s includes top-level', async () => {
  const tree = await resolveSpfTree({ dns: memoryDns(zone) }, 'redirected.test')
  const includes = spfIncludeEvidence(tree)
  expect(includes('192.0.2.77')).toEqual(['mx.example.test'])
  expect(includes('74.125.1.2')).toEqual(['_spf.google.com', '_netblocks.google.com'])
  expect(topLevelIncludes(tree)).toEqual([
    'mx.example.test',
    '_spf.google.com',
    'own.example.test',
    'blocked.test',
    'broken.test',
  ])
})
