import { describe, expect, test } from 'bun:test'
import { firstAddress, headerRecipient } from '../../../infrastructure/mail/header-recipient.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('headerRecipient', () => {
  test('prefers the topmost Delivered-To, then X-Original-To, then To', () => {
    const raw = [
      'Delivered-To: final@reports.test',
      'Received: from mx by relay',
      'Delivered-To: alias@reports.test',
      'X-Original-To: original@reports.test',
      'To: Written <written@reports.test>',
      '',
      'body',
    ].join('\r\n')
    expect(headerRecipient(bytes(raw))).toBe('final@reports.test')
    expect(headerRecipient(bytes(raw.replace(/^Delivered-To:.*\r\n/gm, '')))).toBe('original@reports.test')
    expect(headerRecipient(bytes('To: "Doe, Jane" <jane@reports.test>, other@x.test\r\n\r\n'))).toBe(
      'jane@reports.test',
    )
  })

  test('unfolds continuation lines, accepts bare LF and ignores the body', () => {
    expect(headerRecipient(bytes('Subject: x\nTo:\n  folded@reports.test\n\nTo: body@reports.test\n'))).toBe(
      'folded@reports.test',
    )
    expect(headerRecipient(bytes('Subject: x\r\n\r\nDelivered-To: body@reports.test\r\n'))).toBeNull()
    expect(headerRecipient(bytes(''))).toBeNull()
  })

  test('firstAddress reads angle brackets first, else the first bare address', () => {
    expect(firstAddress('Reports <r@x.test>')).toBe('r@x.test')
    expect(firstAddress('a@x.test, b@x.test')).toBe('a@x.test')
    expect(firstAddress('undisclosed-recipients:;')).toBeNull()
  })
})

describe('hostile header lengths (read in linear time)', () => {
  // Before: `(.*?)\s*$` per line and an unanchored address pattern took 16-17 s on these.
  const N = 200_000
  test('a To header of a long run without an @', () => {
    const start = performance.now()
    expect(headerRecipient(bytes(`To: ${'a'.repeat(N)}\r\n\r\nbody`))).toBeNull()
    expect(performance.now() - start).toBeLessThan(500)
  })

  test('a header value with a long run of blanks inside', () => {
    const start = performance.now()
    const raw = bytes(`X-Junk: a${' '.repeat(N)}b\r\nTo: <r@reports.test>  \r\n\r\n`)
    expect(headerRecipient(raw)).toBe('r@reports.test')
    expect(performance.now() - start).toBeLessThan(500)
  })

  test('an address longer than any real one (254) is no recipient; the next header is read', () => {
    const raw = bytes(`Delivered-To: ${'a'.repeat(100_000)}@x.test\r\nTo: r@reports.test\r\n\r\n`)
    expect(headerRecipient(raw)).toBe('r@reports.test')
  })

  test('a lone CR inside a value still makes the line no header', () => {
    expect(headerRecipient(bytes('To: a@x.test\rjunk\r\nX-Original-To: b@y.test\r\n\r\n'))).toBe('b@y.test')
  })
})
