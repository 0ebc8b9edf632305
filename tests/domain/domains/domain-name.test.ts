import { expect, test } from 'bun:test'
import { normalizeDomainName } from '../../../domain/domains/domain-name.ts'

test.each([
  ['example.com', 'example.com'],
  ['Example.COM.', 'example.com'],
  ['  mail.Example.com  ', 'mail.example.com'],
  ['Bücher.de', 'xn--bcher-kva.de'],
  ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ['ＥＸＡＭＰＬＥ.com', 'example.com'],
  ['例え.jp', 'xn--r8jz45g.jp'],
  ['sub.foo.co.uk', 'sub.foo.co.uk'],
  ['foo.test', 'foo.test'],
  ['a.b.example', 'a.b.example'],
])('%p normalises to %p', (input, expected) => {
  expect(normalizeDomainName(input)).toEqual({ ok: true, name: expected })
})

test.each([
  ['', 'required'],
  ['com', 'two labels'],
  ['co.uk', 'public suffix'],
  ['github.io', null],
  ['1.2.3.4', 'IP address'],
  ['0x7f.1', 'IP address'],
  ['a..b.com', 'label'],
  ['-a.com', 'label'],
  ['a-.com', 'label'],
  ['a_b.com', 'label'],
  ['https://x.com', 'bare domain'],
  ['x.com:25', 'bare domain'],
  ['user@x.com', 'bare domain'],
  ['foo.invalidtld', 'top-level domain'],
  ['xn--zz.com', 'internationalised'],
  [`${'a'.repeat(64)}.com`, 'label'],
  [`${'abcdefghi.'.repeat(26)}com`, '253'],
])('%p is rejected', (input, fragment) => {
  const result = normalizeDomainName(input)
  if (fragment === null) {
    // github.io is an ICANN-registrable name (private suffixes are not applied): accepted.
    expect(result.ok).toBe(true)
    return
  }
  expect(result.ok).toBe(false)
  if (!result.ok) expect(result.reason).toContain(fragment)
})
