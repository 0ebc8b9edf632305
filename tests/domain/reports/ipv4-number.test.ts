import { describe, expect, test } from 'bun:test'
import { ipv4Number } from '../../../domain/reports/ipv4-number.ts'

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
