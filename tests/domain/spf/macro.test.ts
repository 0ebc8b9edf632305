import { describe, expect, test } from 'bun:test'
import { parseIp } from '../../../domain/spf/ip.ts'
import {
  expandDomainSpec,
  expandMacros,
  type MacroValues,
  parseDomainSpec,
  parseMacroString,
  truncateDomainName,
  urlEscape,
} from '../../../domain/spf/macro.ts'

// RFC 7208 §7.4: sender strong-bad@email.example.com, client 192.0.2.3 / 2001:db8::cb01.
const values: MacroValues = {
  sender: 'strong-bad@email.example.com',
  localPart: 'strong-bad',
  senderDomain: 'email.example.com',
  domain: 'email.example.com',
  ip: parseIp('192.0.2.3')!,
  helo: 'mx.example.org',
  now: new Date('2026-03-01T12:00:00.900Z'),
}

function expand(
  text: string,
  context: 'domain-spec' | 'explanation' = 'explanation',
  over: Partial<MacroValues> = {},
) {
  const parsed = parseMacroString(text, context)
  if (!parsed.ok) throw new Error(parsed.message)
  return expandMacros(parsed.tokens, { ...values, ...over })
}

describe('RFC 7208 §7.4 examples', () => {
  const table: [string, string][] = [
    ['%{s}', 'strong-bad@email.example.com'],
    ['%{o}', 'email.example.com'],
    ['%{d}', 'email.example.com'],
    ['%{d4}', 'email.example.com'],
    ['%{d3}', 'email.example.com'],
    ['%{d2}', 'example.com'],
    ['%{d1}', 'com'],
    ['%{dr}', 'com.example.email'],
    ['%{d2r}', 'example.email'],
    ['%{l}', 'strong-bad'],
    ['%{l-}', 'strong.bad'],
    ['%{lr}', 'strong-bad'],
    ['%{lr-}', 'bad.strong'],
    ['%{l1r-}', 'strong'],
    ['%{ir}.%{v}._spf.%{d2}', '3.2.0.192.in-addr._spf.example.com'],
    ['%{lr-}.lp._spf.%{d2}', 'bad.strong.lp._spf.example.com'],
    ['%{lr-}.lp.%{ir}.%{v}._spf.%{d2}', 'bad.strong.lp.3.2.0.192.in-addr._spf.example.com'],
    ['%{ir}.%{v}.%{l1r-}.lp._spf.%{d2}', '3.2.0.192.in-addr.strong.lp._spf.example.com'],
    ['%{d2}.trusted-domains.example.net', 'example.com.trusted-domains.example.net'],
  ]
  for (const [macro, expansion] of table) {
    test(`${macro} → ${expansion}`, () => expect(expand(macro, 'domain-spec')).toBe(expansion))
  }

  test('IPv6: %{ir}.%{v}._spf.%{d2} (nibbles in upper case, as the RFC 7208 test suite expects)', () => {
    const ip = parseIp('2001:db8::cb01')!
    const out = expand('%{ir}.%{v}._spf.%{d2}', 'domain-spec', { ip })
    // The RFC's example is lower case; DNS names compare case-insensitively.
    expect(out.toLowerCase()).toBe(
      '1.0.b.c.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6._spf.example.com',
    )
    expect(expand('%{i}', 'domain-spec', { ip })).toStartWith('2.0.0.1.0.D.B.8.')
  })
})

describe('macro letters', () => {
  test('c, r, t are only allowed in explanations (§7.3)', () => {
    expect(expand('%{c} %{r} %{t}')).toBe('192.0.2.3 unknown 1772366400')
    expect(expand('%{r}', 'explanation', { receivingHost: 'mx.receiver.example' })).toBe(
      'mx.receiver.example',
    )
    for (const letter of ['c', 'r', 't']) {
      const parsed = parseMacroString(`%{${letter}}.example.com`, 'domain-spec')
      expect(parsed.ok).toBe(false)
    }
  })

  test('c is the RFC 5952 form of an IPv6 address, v is ip6', () => {
    const ip = parseIp('2001:DB8:0:0:0:0:0:CB01')!
    expect(expand('%{c} %{v}', 'explanation', { ip })).toBe('2001:db8::cb01 ip6')
  })

  test('p is "unknown" unless a validated name was supplied', () => {
    expect(expand('%{p}', 'domain-spec')).toBe('unknown')
    expect(expand('%{p2}', 'domain-spec', { validatedDomain: 'mx.example.org' })).toBe('example.org')
  })

  test('h is the HELO name', () => expect(expand('%{h}', 'domain-spec')).toBe('mx.example.org'))

  test('letters are case-insensitive, upper case URL-escapes (§7.3)', () => {
    expect(expand('%{L}', 'explanation', { localPart: '~jack&jill=up-a_b3.c' })).toBe(
      '~jack%26jill%3Dup-a_b3.c',
    )
    expect(expand('%{S}')).toBe('strong-bad%40email.example.com')
    expect(urlEscape('a b/é')).toBe('a%20b%2F%C3%A9')
  })
})

describe('transformers and delimiters', () => {
  test('several delimiters split on any of them', () => {
    expect(expand('%{l2r+-}', 'domain-spec', { localPart: 'foo-bar+zip+quux' })).toBe('bar.foo')
    expect(expand('%{l=_}', 'domain-spec', { localPart: 'a=b_c' })).toBe('a.b.c')
  })

  test('a digit larger than the number of parts keeps every part', () => {
    expect(expand('%{d99}', 'domain-spec')).toBe('email.example.com')
    expect(expand(`%{d${'9'.repeat(400)}}`, 'domain-spec')).toBe('email.example.com')
  })

  test('a zero digit is a syntax error (§7.3: MUST be nonzero)', () => {
    expect(parseMacroString('%{d0}', 'domain-spec')).toMatchObject({ ok: false, index: 0 })
    expect(parseMacroString('x%{d00r}', 'domain-spec')).toMatchObject({ ok: false, index: 1 })
  })

  test('capital R also reverses (ABNF is case-insensitive)', () => {
    expect(expand('%{dR}', 'domain-spec')).toBe('com.example.email')
  })
})

describe('escapes and syntax', () => {
  test('%%, %_ and %-', () => {
    expect(expand('macro%%percent%_%_space%-url-space', 'domain-spec')).toBe(
      'macro%percent  space%20url-space',
    )
  })

  test('every malformed macro is an error at the % that starts it', () => {
    expect(parseMacroString('foo%', 'domain-spec')).toMatchObject({ ok: false, index: 3 })
    expect(parseMacroString('foo%(ir)', 'domain-spec')).toMatchObject({ ok: false, index: 3 })
    expect(parseMacroString('a%{d', 'domain-spec')).toMatchObject({ ok: false, index: 1 })
    expect(parseMacroString('%{}', 'domain-spec')).toMatchObject({ ok: false })
    expect(parseMacroString('%{x}', 'explanation')).toMatchObject({ ok: false })
    expect(parseMacroString('%{d2r!}', 'domain-spec')).toMatchObject({ ok: false })
  })

  test('spaces only in explanations; non-ASCII nowhere', () => {
    expect(parseMacroString('The %{x}-files', 'explanation').ok).toBe(false)
    expect(parseMacroString('two words', 'explanation').ok).toBe(true)
    expect(parseMacroString('two words', 'domain-spec').ok).toBe(false)
    expect(parseMacroString('\u00efExplanation', 'explanation')).toMatchObject({ ok: false, index: 0 })
    expect(parseMacroString('日本.example.com', 'domain-spec').ok).toBe(false)
  })

  test('domain-spec must end in a macro or a valid top label (§7.1)', () => {
    expect(parseDomainSpec('%{d}').ok).toBe(true)
    expect(parseDomainSpec('x.%{d}.').ok).toBe(false)
    expect(parseDomainSpec('foo%%').ok).toBe(true)
    expect(parseDomainSpec('example.com.').ok).toBe(true)
    expect(parseDomainSpec('example.123').ok).toBe(false)
    expect(parseDomainSpec('').ok).toBe(false)
  })
})

describe('domain names from macros (§7.3)', () => {
  test('a trailing dot is dropped', () => {
    expect(truncateDomainName('example.com.')).toBe('example.com')
  })

  test('names over 253 characters lose labels from the left', () => {
    const o = 'somewhat.long.exp.example.com'
    const parsed = parseDomainSpec('foobar.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.%{o}.example.com')
    if (!parsed.ok) throw new Error(parsed.message)
    const out = expandDomainSpec(parsed.tokens, { ...values, senderDomain: o })
    expect(out).toBe(`${`${o}.`.repeat(8)}example.com`)
    expect(out.length).toBeLessThanOrEqual(253)
  })

  test('a macro expanding to thousands of characters is cut to 253', () => {
    const huge = Array.from({ length: 2000 }, () => 'label').join('.')
    const parsed = parseDomainSpec('%{l}.example.com')
    if (!parsed.ok) throw new Error(parsed.message)
    const out = expandDomainSpec(parsed.tokens, { ...values, localPart: huge })
    expect(out.length).toBeLessThanOrEqual(253)
    expect(out).toEndWith('label.label.example.com')
  })

  test('one label longer than 253 cannot be shortened and is returned whole', () => {
    expect(truncateDomainName(`${'a'.repeat(300)}`)).toHaveLength(300)
  })
})
