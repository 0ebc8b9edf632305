import { describe, expect, test } from 'bun:test'
import { parseRetryAfter, providerErrorForStatus } from '../../../domain/dns-providers/errors.ts'
import {
  filterRecordSets,
  quoteTxt,
  sortRecordSets,
  txtCharacterStrings,
  unquoteTxt,
  validateRecordSet,
} from '../../../domain/dns-providers/record-set.ts'

const kind = (result: { ok: boolean; failure?: { kind: string } }) =>
  result.ok ? 'ok' : result.failure?.kind

describe('TXT strings', () => {
  test('ASCII text is cut into strings of at most 255 bytes, between terms where it can', () => {
    const spf = `v=spf1 ${Array.from({ length: 30 }, (_, i) => `ip4:192.0.2.${i}`).join(' ')} -all`
    const strings = txtCharacterStrings(spf)
    expect(strings.length).toBe(2)
    expect(strings.every((s) => s.length <= 255)).toBe(true)
    expect(strings[0]?.endsWith(' ')).toBe(true)
    expect(strings.join('')).toBe(spf)
    expect(txtCharacterStrings('')).toEqual([''])
  })

  test('other text is cut by UTF-8 bytes, never inside a character', () => {
    const text = 'é'.repeat(200) + '😀'.repeat(10)
    const strings = txtCharacterStrings(text)
    expect(strings.every((s) => new TextEncoder().encode(s).length <= 255)).toBe(true)
    expect(strings.join('')).toBe(text)
  })

  test('quoting escapes quotes, backslashes and non-printable bytes; unquoting restores the text', () => {
    expect(quoteTxt('say "hi" \\ now')).toBe('"say \\"hi\\" \\\\ now"')
    expect(quoteTxt('é\n')).toBe('"\\195\\169\\010"')
    for (const text of ['', 'plain', 'say "hi" \\ now', 'é😀\t', 'x'.repeat(600)]) {
      expect(unquoteTxt(quoteTxt(text))).toBe(text)
    }
  })

  test('unquoting joins strings without separators and accepts bare text', () => {
    expect(unquoteTxt('"v=spf1 ip4:192.0.2.1 " "-all"')).toBe('v=spf1 ip4:192.0.2.1 -all')
    expect(unquoteTxt('"a"   "b" c')).toBe('abc')
    expect(unquoteTxt('v=DMARC1; p=none')).toBe('v=DMARC1; p=none')
  })
})

describe('validateRecordSet', () => {
  const zone = 'example.com'

  test('normalises names and values', () => {
    const result = validateRecordSet(zone, {
      name: 'Mail.Example.COM.',
      type: 'mx',
      ttl: 300,
      values: [' 10  MX1.Example.com. ', '20 mx2.example.net'],
    })
    expect(result).toEqual({
      ok: true,
      value: {
        name: 'mail.example.com',
        type: 'MX',
        ttl: 300,
        values: ['10 mx1.example.com', '20 mx2.example.net'],
      },
    })
  })

  test('refuses what no provider should be sent', () => {
    const cases = [
      { name: 'example.org', type: 'TXT', ttl: 60, values: ['x'] },
      { name: 'a.*.example.com', type: 'TXT', ttl: 60, values: ['x'] },
      { name: 'example.com', type: 'NS', ttl: 60, values: ['ns.example.net'] },
      { name: 'example.com', type: 'TXT', ttl: 0, values: ['x'] },
      { name: 'example.com', type: 'TXT', ttl: 60, values: [] },
      { name: 'example.com', type: 'TXT', ttl: 60, values: ['x', 'x'] },
      { name: 'example.com', type: 'A', ttl: 60, values: ['192.0.2.256'] },
      { name: 'example.com', type: 'AAAA', ttl: 60, values: ['2001:db8::1::2'] },
      { name: 'example.com', type: 'CNAME', ttl: 60, values: ['x.example.net'] },
      { name: 'www.example.com', type: 'CNAME', ttl: 60, values: ['a.example.net', 'b.example.net'] },
      { name: 'example.com', type: 'TXT', ttl: 60, values: ['x'.repeat(70_000)] },
    ]
    expect(cases.map((set) => kind(validateRecordSet(zone, set)))).toEqual(cases.map(() => 'invalid'))
  })

  test('accepts wildcards, underscores, IPv6 forms and the null MX', () => {
    const cases = [
      { name: '*.example.com', type: 'A', ttl: 60, values: ['192.0.2.1'] },
      { name: '_dmarc.example.com', type: 'TXT', ttl: 60, values: [''] },
      { name: 'example.com', type: 'AAAA', ttl: 60, values: ['2001:DB8::1', '::ffff:192.0.2.1', '::'] },
      { name: 'example.com', type: 'MX', ttl: 60, values: ['0 .'] },
    ]
    expect(cases.map((set) => kind(validateRecordSet(zone, set)))).toEqual(['ok', 'ok', 'ok', 'ok'])
  })
})

test('filtering and sorting sets compares canonical names and types', () => {
  const sets = [
    { name: 'b.example.com', type: 'TXT', ttl: 1, values: ['2', '1'] },
    { name: 'a.example.com', type: 'TXT', ttl: 1, values: ['x'] },
    { name: 'a.example.com', type: 'MX', ttl: 1, values: ['10 a'] },
  ]
  expect(sortRecordSets(sets).map((s) => `${s.name} ${s.type} ${s.values}`)).toEqual([
    'a.example.com MX 10 a',
    'a.example.com TXT x',
    'b.example.com TXT 1,2',
  ])
  expect(filterRecordSets(sets, { name: 'A.Example.com.', type: 'txt' })).toEqual([sets[1]!])
})

test('HTTP statuses map to the typed errors; Retry-After takes seconds or a date', () => {
  const kinds = [400, 401, 403, 404, 409, 422, 429, 500, 503].map((s) => providerErrorForStatus(s, 'm').kind)
  expect(kinds).toEqual([
    'invalid',
    'bad_credentials',
    'forbidden',
    'not_found',
    'conflict',
    'invalid',
    'rate_limited',
    'unavailable',
    'unavailable',
  ])
  expect(providerErrorForStatus(429, 'm', 30)).toEqual({ kind: 'rate_limited', message: 'm', retryAfter: 30 })
  const now = Date.parse('2026-01-01T00:00:00Z')
  expect(parseRetryAfter('120', now)).toBe(120)
  expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:30 GMT', now)).toBe(90)
  expect(parseRetryAfter('soon', now)).toBeUndefined()
  expect(parseRetryAfter(null, now)).toBeUndefined()
})
