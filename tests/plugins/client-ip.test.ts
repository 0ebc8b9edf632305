import { expect, test } from 'bun:test'
import { clientIp } from '../../plugins/client-ip.ts'

test('without trusted proxies the socket address is the client, whatever the headers say', () => {
  expect(clientIp({ socketIp: '192.0.2.1', forwardedFor: '203.0.113.9', trustedHops: 0 })).toBe('192.0.2.1')
})

test('with N trusted hops the client is the N-th forwarded entry from the right', () => {
  const forwardedFor = 'spoofed, 203.0.113.9, 10.0.0.2'
  expect(clientIp({ socketIp: '10.0.0.3', forwardedFor, trustedHops: 1 })).toBe('10.0.0.2')
  expect(clientIp({ socketIp: '10.0.0.3', forwardedFor, trustedHops: 2 })).toBe('203.0.113.9')
  expect(clientIp({ socketIp: '10.0.0.3', forwardedFor: '203.0.113.9', trustedHops: 5 })).toBe('203.0.113.9')
  expect(clientIp({ socketIp: '10.0.0.3', forwardedFor: ' , ', trustedHops: 1 })).toBe('10.0.0.3')
  expect(clientIp({ socketIp: null, forwardedFor: null, trustedHops: 1 })).toBe('unknown')
})

test('a forwarded entry with a port is the address without it', () => {
  const from = (forwardedFor: string) => clientIp({ socketIp: '10.0.0.3', forwardedFor, trustedHops: 1 })
  expect(from('192.0.2.1:5678')).toBe('192.0.2.1')
  expect(from('[2001:db8::1]:443')).toBe('2001:db8::1')
  expect(from('[2001:db8::1]')).toBe('2001:db8::1')
  expect(from('2001:db8::1')).toBe('2001:db8::1')
  expect(from('unknown')).toBe('unknown')
})
