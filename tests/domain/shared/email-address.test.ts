import { describe, expect, test } from 'bun:test'
import { emailLookupKey, MAX_EMAIL_LENGTH, normalizeEmail } from '../../../domain/shared/email-address.ts'

// The one address rule (RFC 5321 §4.1.2 Mailbox, dot-atom local part, LDH domain) that every
// address the API, the dashboard and the CLI take goes through: account e-mail, invitations,
// notification recipients. A hostile-input sweep found `<a@example.com>` stored with its brackets.

describe('normalizeEmail', () => {
  test('a mailbox: trimmed and lower-cased', () => {
    expect(normalizeEmail(' Ann@Example.COM ')).toBe('ann@example.com')
    for (const address of [
      'a@example.com',
      'first.last@mail.example.co.uk',
      "o'brien+dmarc@example.com",
      "!#$%&'*+/=?^_`{|}~-@example.com",
      'a@xn--bcher-kva.example',
      'a@1example.com',
      'a@a-b.example',
      `${'l'.repeat(64)}@example.com`,
      `a@${'d'.repeat(63)}.example`,
    ])
      expect(normalizeEmail(address), address).toBe(address.toLowerCase())
  })

  test('the addresses a hostile-input sweep got stored are refused', () => {
    for (const address of [
      '<a@example.com>',
      'a..b@example.com',
      '.a@example.com',
      'a@-example.com',
      'a@example..com',
    ])
      expect(normalizeEmail(address), address).toBeNull()
  })

  test('the local part is a dot-atom: no quoted strings, no dots at its ends, at most 64 characters', () => {
    for (const address of [
      'a.@example.com',
      '"a b"@example.com',
      '"a"@example.com',
      'a b@example.com',
      'a(comment)@example.com',
      'a,b@example.com',
      'a;b@example.com',
      'a\\b@example.com',
      '[a]@example.com',
      'ä@example.com',
      '\u212aate@example.com',
      `${'l'.repeat(65)}@example.com`,
      '@example.com',
    ])
      expect(normalizeEmail(address), address).toBeNull()
  })

  test('the domain is two or more LDH labels of 1-63 characters, no hyphen at their ends', () => {
    for (const address of [
      'a@example',
      'a@example-.com',
      'a@.example.com',
      'a@example.com.',
      'a@exa_mple.com',
      'a@exämple.com',
      'a@[192.0.2.1]',
      'a@192.0.2.1',
      `a@${'d'.repeat(64)}.example`,
      'a@',
      'a@b@example.com',
      'a',
      '',
    ])
      expect(normalizeEmail(address), address).toBeNull()
  })

  test('at most 254 characters in all', () => {
    const local = 'l'.repeat(64)
    const domain = `${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(61)}`
    expect(`${local}@${domain}`.length).toBe(MAX_EMAIL_LENGTH)
    expect(normalizeEmail(`${local}@${domain}`)).toBe(`${local}@${domain}`)
    expect(normalizeEmail(`${local}@${domain}d`)).toBeNull()
  })

  test('control and bidirectional characters inside an address are refused', () => {
    for (const address of [
      'a\n@example.com',
      'a\u0000@example.com',
      'a\u202e@example.com',
      'a@example.com\u2066',
    ])
      expect(normalizeEmail(address), JSON.stringify(address)).toBeNull()
  })
})

describe('emailLookupKey', () => {
  test('an existing account is looked up as stored, whatever rule took its address', () => {
    expect(emailLookupKey(' Ann@Example.COM ')).toBe('ann@example.com')
    expect(emailLookupKey('A..B@Example.com')).toBe('a..b@example.com')
    expect(emailLookupKey('   ')).toBeNull()
    expect(emailLookupKey(`${'a'.repeat(250)}@x.yz`)).toBeNull()
  })
})
