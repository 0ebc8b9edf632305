import { describe, expect, test } from 'bun:test'
import type { DnsRecord } from '../../../domain/dns/ports.ts'
import { checkPublicHost, isPublicAddress } from '../../../infrastructure/http/address-guard.ts'
import { createGuardedClient } from '../../../infrastructure/http/guarded-client.ts'
import { a, memoryDns } from '../../support/memory-dns.ts'
import { failureOf } from './failure-of.ts'

// The SSRF rules (infrastructure/http/address-guard.ts, docs/outbound-http.md): only globally
// reachable addresses, per the IANA IPv4 and IPv6 Special-Purpose Address Registries. Each refused
// block is checked at its first and last address, and the public addresses just outside it pass.

const aaaa = (address: string): DnsRecord => ({ type: 'AAAA', address, ttl: 300 })

describe('IPv4', () => {
  test.each([
    ['0.0.0.0', '0.255.255.255', 'this network'],
    ['10.0.0.0', '10.255.255.255', 'private use'],
    ['100.64.0.0', '100.127.255.255', 'shared address space (CGNAT)'],
    ['127.0.0.0', '127.255.255.255', 'loopback'],
    ['169.254.0.0', '169.254.255.255', 'link-local (cloud metadata)'],
    ['172.16.0.0', '172.31.255.255', 'private use'],
    ['192.0.0.0', '192.0.0.255', 'IETF protocol assignments'],
    ['192.0.2.0', '192.0.2.255', 'documentation TEST-NET-1'],
    ['192.88.99.0', '192.88.99.255', 'deprecated 6to4 relay anycast'],
    ['192.168.0.0', '192.168.255.255', 'private use'],
    ['198.18.0.0', '198.19.255.255', 'benchmarking'],
    ['198.51.100.0', '198.51.100.255', 'documentation TEST-NET-2'],
    ['203.0.113.0', '203.0.113.255', 'documentation TEST-NET-3'],
    ['224.0.0.0', '239.255.255.255', 'multicast'],
    ['240.0.0.0', '255.255.255.255', 'reserved and limited broadcast'],
  ])('%s to %s (%s) is refused', (first, last) => {
    expect(isPublicAddress(first)).toBe(false)
    expect(isPublicAddress(last)).toBe(false)
  })

  test.each([
    '1.0.0.0',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '191.255.255.255',
    '192.0.1.0',
    '192.0.3.0',
    '192.88.98.255',
    '192.88.100.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
    '93.184.216.34',
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })
})

describe('IPv6', () => {
  test.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible, embedding loopback (::/96)'],
    ['::7f00:1', 'IPv4-compatible, as URLs spell it'],
    ['::93.184.216.34', 'IPv4-compatible, even embedding a public address'],
    ['::ffff:0:7f00:1', 'IPv4-translated (::ffff:0:0:0/96)'],
    ['64:ff9b::7f00:1', 'NAT64 well-known prefix'],
    ['64:ff9b::5db8:d822', 'NAT64 well-known prefix, embedding a public address'],
    ['64:ff9b:1::7f00:1', 'NAT64 local-use prefix (64:ff9b:1::/48)'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64 local-use prefix, last address'],
    ['100::', 'discard-only (100::/64)'],
    ['100::ffff:ffff:ffff:ffff', 'discard-only, last address'],
    ['100:0:0:1::1', 'dummy prefix (outside 2000::/3)'],
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'reserved by the IETF, just below 2000::/3'],
    ['2001::', 'Teredo (2001::/32), first address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, a real-looking address'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'Teredo, last address'],
    ['2001:1::1', 'PCP anycast (IETF protocol assignments)'],
    ['2001:2::1', 'benchmarking (2001:2::/48)'],
    ['2001:10::1', 'deprecated ORCHID'],
    ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'IETF protocol assignments (2001::/23), last address'],
    ['2001:db8::', 'documentation (2001:db8::/32), first address'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation, last address'],
    ['2002::', '6to4 (2002::/16), first address'],
    ['2002:7f00:1::', '6to4 embedding 127.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4 embedding 169.254.169.254'],
    ['2002:5db8:d822::1', '6to4, even embedding a public address'],
    ['2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '6to4, last address'],
    ['3fff::', 'documentation (3fff::/20, RFC 9637), first address'],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation (3fff::/20), last address'],
    ['4000::1', 'reserved by the IETF, just above 2000::/3'],
    ['5f00::1', 'SRv6 SIDs (5f00::/16)'],
    ['fc00::1', 'unique-local'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local, last address'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local, last address'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'global-scope multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, as URLs spell it'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped metadata address, spelled out'],
    ['::FFFF:C0A8:0101', 'IPv4-mapped private address, upper case'],
    ['::ffff:c000:201', 'IPv4-mapped documentation address'],
  ])('%s (%s) is refused', (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  test.each([
    ['2000::1', 'first block of 2000::/3'],
    ['2001:200::1', 'first RIR allocation after 2001::/23 (APNIC)'],
    ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', 'just below 2001:db8::/32'],
    ['2001:db9::1', 'just above 2001:db8::/32'],
    ['2001:4860:4860::8888', 'a public resolver'],
    ['2001:1fff:ffff:ffff:ffff:ffff:ffff:ffff', 'below 2002::/16'],
    ['2003::1', 'just above 2002::/16'],
    ['2606:2800:220:1::1', 'a public web host'],
    ['3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'just below 3fff::/20'],
    ['3fff:1000::1', 'just above 3fff::/20'],
    ['::ffff:93.184.216.34', 'IPv4-mapped public address'],
    ['::ffff:5db8:d822', 'IPv4-mapped public address, as URLs spell it'],
  ])('%s (%s) is public', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })
})

test.each(['', 'localhost', 'example.com', '127.1', '010.0.0.1', '[::1]', '1::2::3', '::1%'])(
  '%p is not an address and is refused',
  (text) => {
    expect(isPublicAddress(text)).toBe(false)
  },
)

describe('host names: every A and AAAA record is checked', () => {
  const dns = memoryDns({
    'public.example': [a('93.184.216.34'), aaaa('2606:2800:220:1::1')],
    'sixtofour.example': [a('93.184.216.34'), aaaa('2002:7f00:1::')],
    'compatible.example': [aaaa('2606:2800:220:1::1'), aaaa('::127.0.0.1')],
    'teredo.example': [aaaa('2001:0:4136:e378:8000:63bf:3fff:fdd2')],
    'nat64-local.example': [a('93.184.216.34'), aaaa('64:ff9b:1::7f00:1')],
    'v4-only-private.example': [a('93.184.216.34'), a('192.88.99.1')],
  })

  test('a host whose every address is public passes with all of them', async () => {
    expect(await checkPublicHost({ dns, allowPrivate: false }, 'public.example')).toEqual({
      ok: true,
      addresses: ['93.184.216.34', '2606:2800:220:1::1'],
    })
  })

  test.each([
    ['sixtofour.example', '2002:7f00:1::'],
    ['compatible.example', '::127.0.0.1'],
    ['teredo.example', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['nat64-local.example', '64:ff9b:1::7f00:1'],
    ['v4-only-private.example', '192.88.99.1'],
  ])('%s is refused for %s', async (host, address) => {
    const check = await checkPublicHost({ dns, allowPrivate: false }, host)
    expect(check).toEqual({ ok: false, reason: expect.stringContaining(address) })
    expect((await checkPublicHost({ dns, allowPrivate: true }, host)).ok).toBe(true)
  })
})

describe('the guarded client refuses them before connecting', () => {
  const dns = memoryDns({ 'sixtofour.example': [a('93.184.216.34'), aaaa('2002:7f00:1::')] })
  const client = createGuardedClient({
    dns,
    allowPrivate: false,
    maxResponseBytes: 1024,
    connectTimeoutMs: 2_000,
    totalTimeoutMs: 5_000,
  })

  test.each([
    'https://[::127.0.0.1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[2002:7f00:1::]:8081/',
    'https://[64:ff9b:1::7f00:1]/',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    'https://[3fff::1]/',
    'https://[5f00::1]/',
    'https://sixtofour.example/',
  ])('%s', async (url) => {
    const failure = await failureOf(client.request(url))
    expect(failure.kind).toBe('refused')
    expect(failure.message).toContain('non-public')
  })
})
