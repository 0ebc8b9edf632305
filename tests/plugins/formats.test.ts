import { expect, test } from 'bun:test'
import '../../plugins/formats.ts'
import { FormatRegistry } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'

// @elysiajs/openapi replaces TypeBox's formats with Zod checks, and the IP ones threw (issue #16:
// `?source_ip=11.1.2.3` was a 500). plugins/formats.ts puts working ones back and makes every
// format answer false instead of throwing.

test('IP formats accept addresses and refuse the rest', () => {
  const check = (format: string, value: string) => Value.Check(t.String({ format }), value)
  expect(check('ipv4', '11.1.2.3')).toBe(true)
  expect(check('ipv4', '300.1.2.3')).toBe(false)
  expect(check('ipv4', '::1')).toBe(false)
  expect(check('ipv6', '2001:db8::1')).toBe(true)
  expect(check('ipv6', 'fe80::1%eth0')).toBe(false)
  expect(check('ip', '192.0.2.1')).toBe(true)
  expect(check('cidr', '192.0.2.0/24')).toBe(true)
  expect(check('cidrv4', '192.0.2.0/33')).toBe(false)
  expect(check('cidrv6', '2001:db8::/32')).toBe(true)
})

test('no registered format throws, whatever it is given', () => {
  for (const [name, check] of FormatRegistry.Entries()) {
    for (const value of ['', 'x', '\u0000', 'a'.repeat(10_000), '1.2.3.4', '::1']) {
      expect(() => check(value), `${name} on ${JSON.stringify(value.slice(0, 10))}`).not.toThrow()
    }
  }
})
