import { describe, expect, test } from 'bun:test'
import {
  dottedIp,
  formatIp,
  inNetwork,
  ipv4Number,
  isIpv4,
  maskIp,
  parseIp,
  parseIpv4,
  parseIpv6,
  reverseName,
  unmapIpv4,
} from '../../../domain/spf/ip.ts'
import { findOverlaps, network, networkTerm, normalizeSet, subtract } from '../../../domain/spf/networks.ts'

const ip = (text: string) => {
  const parsed = parseIp(text)
  if (parsed === null) throw new Error(`not an IP: ${text}`)
  return parsed
}

describe('IPv4 (RFC 7208 §5.6 ip4-network)', () => {
  test('dotted quads only, no leading zeros, no short forms', () => {
    expect(formatIp(parseIpv4('192.0.2.1')!)).toBe('192.0.2.1')
    expect(parseIpv4('0.0.0.0')).not.toBeNull()
    expect(parseIpv4('255.255.255.255')).not.toBeNull()
    for (const good of ['10.0.0.10', '100.200.0.1', '249.250.251.252', '1.20.199.9']) {
      expect(formatIp(parseIpv4(good)!)).toBe(good)
      expect(isIpv4(good)).toBe(true)
    }
    for (const bad of [
      '1..2.3',
      '.1.2.3',
      '1.2.3.',
      '00.1.2.3',
      '1.2.3.04',
      '300.1.1.1',
      '1.2.3.2555',
      '1.2.3.-4',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '1.2.3.256',
      '1.2.3.4:25',
      '1.2.3.4 ',
      '',
      '١.2.3.4',
    ]) {
      expect(parseIpv4(bad)).toBeNull()
      expect(isIpv4(bad)).toBe(false)
    }
  })
})

describe('IPv6 (RFC 4291 §2.2)', () => {
  test('full, compressed and IPv4-tail forms', () => {
    expect(formatIp(parseIpv6('2001:0db8:0000:0000:0000:0000:0000:0001')!)).toBe('2001:db8::1')
    expect(formatIp(parseIpv6('::')!)).toBe('::')
    expect(formatIp(parseIpv6('::1')!)).toBe('::1')
    expect(formatIp(parseIpv6('fe80::')!)).toBe('fe80::')
    expect(formatIp(parseIpv6('::1.1.1.1')!)).toBe('::101:101')
    expect(formatIp(parseIpv6('CAFE:BABE::192.168.218.40')!)).toBe('cafe:babe::c0a8:da28')
  })

  test('malformed addresses are rejected', () => {
    for (const bad of [
      ':CAFE::BABE',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '12345::',
      'g::1',
      '::1.2.3',
      '1.2.3.4::',
      ':',
      '',
      // The one-pass parser's edges: a trailing or doubled colon, a tail not last, too many words.
      '1:',
      '1:::2',
      ':::',
      '1:2:3:4:5:6:7:1.2.3.4',
      '1:2:3:4:5:6::1.2.3.4',
      '::1.2.3.04',
      '1.2.3.4:1::',
      '::0x1',
      '1:2 ',
    ]) {
      expect(parseIpv6(bad)).toBeNull()
    }
    expect(parseIpv6('1:2:3:4:5:6:7::')).not.toBeNull()
    expect(formatIp(parseIpv6('1:2:3:4:5:6:1.2.3.4')!)).toBe('1:2:3:4:5:6:102:304')
    expect(formatIp(parseIpv6('1:2:3:4:5::1.2.3.4')!)).toBe('1:2:3:4:5:0:102:304')
    expect(formatIp(parseIpv6('::2:3:4:5:6:7:8')!)).toBe('0:2:3:4:5:6:7:8')
    expect(parseIpv6('1:2:3:4:5:6:7:8::')).toBeNull()
  })

  test('RFC 5952: the longest zero run is compressed, the first on a tie, single zeros are not', () => {
    expect(formatIp(ip('2001:db8:0:0:1:0:0:1'))).toBe('2001:db8::1:0:0:1')
    expect(formatIp(ip('2001:0:0:1:0:0:0:1'))).toBe('2001:0:0:1::1')
    expect(formatIp(ip('2001:db8:0:1:1:1:1:1'))).toBe('2001:db8:0:1:1:1:1:1')
  })
})

describe('IPv4-mapped IPv6 (RFC 7208 §5)', () => {
  test('::ffff:a.b.c.d becomes the IPv4 address', () => {
    expect(unmapIpv4(ip('::FFFF:1.2.3.4'))).toEqual(ip('1.2.3.4'))
    expect(unmapIpv4(ip('::ffff:102:304'))).toEqual(ip('1.2.3.4'))
  })

  test('other IPv6 addresses stay IPv6', () => {
    expect(unmapIpv4(ip('::1.2.3.4')).family).toBe(6)
    expect(unmapIpv4(ip('64:ff9b::1.2.3.4')).family).toBe(6)
  })
})

describe('CIDR matching', () => {
  test('prefixes, including /0 and odd bit counts', () => {
    expect(inNetwork(ip('192.0.2.77'), ip('192.0.2.0'), 24)).toBe(true)
    expect(inNetwork(ip('192.0.3.1'), ip('192.0.2.0'), 24)).toBe(false)
    expect(inNetwork(ip('10.1.2.3'), ip('1.1.1.1'), 0)).toBe(true)
    expect(inNetwork(ip('192.0.2.130'), ip('192.0.2.128'), 25)).toBe(true)
    expect(inNetwork(ip('192.0.2.127'), ip('192.0.2.128'), 25)).toBe(false)
    expect(inNetwork(ip('cafe:babe:8000::1'), ip('cafe:babe:8000::'), 33)).toBe(true)
    expect(inNetwork(ip('cafe:babe:7fff::1'), ip('cafe:babe:8000::'), 33)).toBe(false)
  })

  test('families never match each other, even with /0', () => {
    expect(inNetwork(ip('1.2.3.4'), ip('::'), 0)).toBe(false)
    expect(inNetwork(ip('::1'), ip('0.0.0.0'), 0)).toBe(false)
  })

  test('masking clears host bits', () => {
    expect(formatIp(maskIp(ip('192.0.2.77'), 26))).toBe('192.0.2.64')
    expect(formatIp(maskIp(ip('2001:db8:ffff::1'), 36))).toBe('2001:db8:f000::')
  })
})

describe('reverse names and the i macro', () => {
  test('in-addr.arpa and nibble ip6.arpa', () => {
    expect(reverseName(ip('192.0.2.3'))).toBe('3.2.0.192.in-addr.arpa')
    expect(reverseName(ip('2001:db8::cb01'))).toBe(
      '1.0.b.c.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    )
    expect(dottedIp(ip('192.0.2.3'))).toBe('192.0.2.3')
  })
})

describe('network sets', () => {
  const n = (text: string) => {
    const [address = '', prefix] = text.split('/')
    const parsed = ip(address)
    return network(parsed, prefix === undefined ? (parsed.family === 4 ? 32 : 128) : Number(prefix))
  }

  test('subtracting a host from a /24 leaves 8 networks that cover the rest exactly', () => {
    const rest = subtract(n('203.0.113.0/24'), n('203.0.113.5'))
    expect(rest.map(networkTerm).sort()).toEqual(
      [
        'ip4:203.0.113.0/30',
        'ip4:203.0.113.4',
        'ip4:203.0.113.6/31',
        'ip4:203.0.113.8/29',
        'ip4:203.0.113.16/28',
        'ip4:203.0.113.32/27',
        'ip4:203.0.113.64/26',
        'ip4:203.0.113.128/25',
      ].sort(),
    )
    for (let last = 0; last < 256; last++) {
      const inside = rest.some((r) => inNetwork(ip(`203.0.113.${last}`), r.address, r.prefix))
      expect(inside).toBe(last !== 5)
    }
  })

  test('subtracting something disjoint or larger', () => {
    expect(subtract(n('10.0.0.0/8'), n('11.0.0.0/8')).map(networkTerm)).toEqual(['ip4:10.0.0.0/8'])
    expect(subtract(n('10.1.0.0/16'), n('10.0.0.0/8'))).toEqual([])
    expect(subtract(n('2001:db8::/32'), n('2001:db8::/33')).map(networkTerm)).toEqual([
      'ip6:2001:db8:8000::/33',
    ])
  })

  test('normalizeSet drops contained and repeated networks', () => {
    const set = normalizeSet([n('10.0.0.5'), n('10.0.0.0/24'), n('10.0.0.0/24'), n('::1')])
    expect(set.map(networkTerm)).toEqual(['ip4:10.0.0.0/24', 'ip6:::1'])
  })

  test('findOverlaps reports duplicates and the closest container', () => {
    const items = ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.3', '192.0.2.0/24', '10.1.0.0/16', '2001:db8::/32']
    const overlaps = findOverlaps(items, n)
    expect(overlaps).toEqual([
      { kind: 'contained', item: '10.1.0.0/16', within: '10.0.0.0/8' },
      { kind: 'duplicate', item: '10.1.0.0/16', within: '10.1.0.0/16' },
      { kind: 'contained', item: '10.1.2.3', within: '10.1.0.0/16' },
    ])
  })
})

describe('ipv4Number', () => {
  test('a canonical dotted quad is its 32-bit number', () => {
    expect(ipv4Number('0.0.0.0')).toBe(0)
    expect(ipv4Number('10.0.0.1')).toBe(0x0a000001)
    expect(ipv4Number('192.0.2.255')).toBe(0xc00002ff)
    expect(ipv4Number('255.255.255.255')).toBe(0xffffffff)
  })

  test('anything else is -1, so it keeps its own string key', () => {
    for (const ip of [
      '',
      '1.2.3',
      '1.2.3.4.5',
      '01.2.3.4',
      '1.2.3.256',
      '1..3.4',
      '1.2.3.4 ',
      '::1',
      '1.2.3.1234',
    ])
      expect(ipv4Number(ip)).toBe(-1)
  })
})
