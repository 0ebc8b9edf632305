import { expect, test } from 'bun:test'
import { clientNetwork } from '../../../domain/rate-limits/client-network.ts'

test('an IPv4 client is its address; an IPv4-mapped one is the IPv4 address', () => {
  expect(clientNetwork('198.51.100.7')).toBe('198.51.100.7')
  expect(clientNetwork('::ffff:198.51.100.7')).toBe('198.51.100.7')
  expect(clientNetwork('::ffff:c633:6407')).toBe('198.51.100.7')
})

test('an IPv6 client is its /56, written one way whatever the spelling', () => {
  expect(clientNetwork('2001:db8:aa:1::1')).toBe('2001:db8:aa::/56')
  expect(clientNetwork('2001:DB8:AA:ff:ffff:ffff:ffff:ffff')).toBe('2001:db8:aa::/56')
  expect(clientNetwork('2001:0db8:00aa:0000::0001')).toBe('2001:db8:aa::/56')
  expect(clientNetwork('2001:db8:aa:100::1')).toBe('2001:db8:aa:100::/56')
  expect(clientNetwork('::1')).toBe('::/56')
  expect(clientNetwork('2001:db8:aa:1::1', 64)).toBe('2001:db8:aa:1::/64')
  expect(clientNetwork('198.51.100.7', 64)).toBe('198.51.100.7')
})

test('what is not an address is counted as given', () => {
  expect(clientNetwork('unknown')).toBe('unknown')
  expect(clientNetwork('fe80::1%eth0')).toBe('fe80::1%eth0')
  expect(clientNetwork('')).toBe('')
})
