import { describe, expect, test } from 'bun:test'
import { formatIp } from '../../../domain/spf/ip.ts'
import {
  type Directive,
  isSpfRecord,
  joinTxtStrings,
  parseSpfRecord,
  type SpfRecord,
  type SpfSyntaxError,
  selectSpfRecords,
} from '../../../domain/spf/record.ts'

function parse(text: string): SpfRecord {
  const parsed = parseSpfRecord(text)
  if (!parsed.ok) throw new Error(`unexpected syntax error: ${parsed.error.message}`)
  return parsed.record
}

function error(text: string): SpfSyntaxError {
  const parsed = parseSpfRecord(text)
  if (parsed.ok) throw new Error(`expected a syntax error in ${text.slice(0, 80)}`)
  return parsed.error
}

function only(text: string): Directive {
  const record = parse(`v=spf1 ${text}`)
  expect(record.directives).toHaveLength(1)
  return record.directives[0]!
}

describe('record selection (RFC 7208 §4.5, §3.3)', () => {
  test('v=spf1 must be followed by a space or the end, in any case', () => {
    expect(isSpfRecord('v=spf1')).toBe(true)
    expect(isSpfRecord('v=spf1 -all')).toBe(true)
    expect(isSpfRecord('V=SpF1 -all')).toBe(true)
    expect(isSpfRecord('v=spf10')).toBe(false)
    expect(isSpfRecord('v=spf1mx')).toBe(false)
    expect(isSpfRecord('v=spf1\t-all')).toBe(false)
    expect(isSpfRecord(' v=spf1')).toBe(false)
    expect(isSpfRecord('spf2.0/pra -all')).toBe(false)
    for (const other of ['v=spf', 'v-spf1', 'v=spf2', 'w=spf1', 'v=sp f1', ''])
      expect(isSpfRecord(other)).toBe(false)
  })

  test('strings of one TXT record are joined without spaces', () => {
    expect(joinTxtStrings(['v=spf1 ip4:', '192.0.2.5 -all'])).toBe('v=spf1 ip4:192.0.2.5 -all')
    expect(joinTxtStrings([])).toBe('')
  })

  test('only SPF records are kept, and each record is joined first', () => {
    const records = [['google-site-verification=abc'], ['v=spf1', ' -all'], ['v=spf1', 'mx'], []]
    expect(selectSpfRecords(records)).toEqual(['v=spf1 -all'])
  })
})

describe('mechanisms (RFC 7208 §5)', () => {
  test('qualifiers: explicit or the default "+"', () => {
    expect(only('all')).toMatchObject({ qualifier: '+', explicitQualifier: false })
    expect(only('+all').qualifier).toBe('+')
    expect(only('-all').qualifier).toBe('-')
    expect(only('~all').qualifier).toBe('~')
    expect(only('?all').qualifier).toBe('?')
  })

  test('include and exists take a domain-spec', () => {
    expect(only('include:_spf.example.com').mechanism).toMatchObject({
      kind: 'include',
      domain: { text: '_spf.example.com' },
    })
    expect(only('exists:%{i}.bl.example.com').mechanism).toMatchObject({ kind: 'exists' })
  })

  test('a and mx take an optional domain and a dual CIDR', () => {
    expect(only('a').mechanism).toEqual({ kind: 'a', domain: null, cidr4: null, cidr6: null })
    expect(only('a/24').mechanism).toMatchObject({ domain: null, cidr4: 24, cidr6: null })
    expect(only('a//64').mechanism).toMatchObject({ domain: null, cidr4: null, cidr6: 64 })
    expect(only('mx:mail.example.com/24//64').mechanism).toMatchObject({
      kind: 'mx',
      domain: { text: 'mail.example.com' },
      cidr4: 24,
      cidr6: 64,
    })
    // A ':' or '/' inside the domain is fine as long as the domain ends in a valid top label.
    expect(only('a:foo:bar/baz.example.com').mechanism).toMatchObject({
      domain: { text: 'foo:bar/baz.example.com' },
      cidr4: null,
    })
  })

  test('ip4 and ip6 networks, with and without a prefix', () => {
    const ip4 = only('ip4:192.0.2.0/24').mechanism
    expect(ip4.kind === 'ip4' && [formatIp(ip4.address), ip4.prefix]).toEqual(['192.0.2.0', 24])
    const ip6 = only('-ip6:2001:DB8::/32').mechanism
    expect(ip6.kind === 'ip6' && [formatIp(ip6.address), ip6.prefix]).toEqual(['2001:db8::', 32])
    expect(only('ip4:192.0.2.1').mechanism).toMatchObject({ prefix: null })
  })

  test('ptr with and without a domain', () => {
    expect(only('ptr').mechanism).toEqual({ kind: 'ptr', domain: null })
    expect(only('ptr:example.com').mechanism).toMatchObject({ domain: { text: 'example.com' } })
  })

  test('mechanism names are case-insensitive', () => {
    expect(only('INCLUDE:example.com').mechanism.kind).toBe('include')
    expect(only('-ALL').mechanism.kind).toBe('all')
  })
})

describe('modifiers (RFC 7208 §6)', () => {
  test('redirect and exp are kept as domain-specs, anywhere in the record', () => {
    const record = parse('v=spf1 exp=explain.%{d} mx redirect=_spf.example.com')
    expect(record.redirect?.text).toBe('_spf.example.com')
    expect(record.explanation?.text).toBe('explain.%{d}')
    expect(record.directives.map((d) => d.text)).toEqual(['mx'])
  })

  test('unknown modifiers are kept with their value', () => {
    const record = parse('v=spf1 moo.cow-far_out=man:dog/cat -all')
    expect(record.unknownModifiers).toMatchObject([{ name: 'moo.cow-far_out', value: 'man:dog/cat' }])
  })

  test('hasAll tells whether redirect will be ignored', () => {
    expect(parse('v=spf1 redirect=x.example.com ~all').hasAll).toBe(true)
    expect(parse('v=spf1 redirect=x.example.com').hasAll).toBe(false)
  })

  test('terms are separated by one or more spaces; trailing spaces are allowed', () => {
    expect(parse('v=spf1   a    -all   ').directives.map((d) => d.text)).toEqual(['a', '-all'])
    expect(parse('v=spf1').terms).toEqual([])
  })
})

describe('syntax errors are located', () => {
  test('unknown mechanism: the term and its position', () => {
    expect(error('v=spf1 ip4:192.0.2.1 -all moo')).toMatchObject({
      term: 'moo',
      termPosition: 26,
      position: 26,
      message: "unknown mechanism 'moo'",
    })
  })

  test('a bad prefix length points at the slash', () => {
    const e = error('v=spf1 ip4:192.0.2.1/33')
    expect(e).toMatchObject({ term: 'ip4:192.0.2.1/33', termPosition: 7, position: 20 })
    expect(e.message).toContain("'/33'")
    expect(error('v=spf1 ip4:1.2.3.4/032').message).toContain('prefix length')
    expect(error('v=spf1 a/24/64').message).toContain("'/64'")
    expect(error('v=spf1 a//129').position).toBe(8)
  })

  test('an invalid macro points at the %', () => {
    const e = error('v=spf1 exists:foo%(ir).example.com')
    expect(e).toMatchObject({ termPosition: 7, position: 17 })
    expect(e.message).toContain("'%' must be followed by")
    expect(error('v=spf1 a:%{a}.example.com').message).toContain("unknown macro letter 'a'")
    expect(error('v=spf1 -all exp=%{r}.example.com').message).toContain('only allowed in exp text')
    expect(error('v=spf1 exists:%{d0}.example.com').message).toContain('nonzero')
  })

  test('a domain-spec needs a valid top label (RFC 7208 §7.1)', () => {
    expect(error('v=spf1 a:museum').message).toContain('at least two labels')
    expect(error('v=spf1 a:111.222.33.44').message).toContain("'44' is not a valid top-level label")
    const e = error('v=spf1 a:example.com:8080')
    expect(e.position).toBe('v=spf1 a:example.'.length)
    expect(error('v=spf1 include:example.com/24').message).toContain("'com/24'")
    expect(parseSpfRecord('v=spf1 a:foo.example.xn--zckzah -all').ok).toBe(true)
    expect(parseSpfRecord('v=spf1 a:%{d}').ok).toBe(true)
  })

  test('control characters and non-ASCII are errors at their exact position', () => {
    const e = error('v=spf1 a:ctrl.example.com\rptr -all')
    expect(e.position).toBe('v=spf1 a:ctrl.example.com'.length)
    expect(e.message).toContain('U+000D')
    const unicode = error('v=spf1 a:exämple.com -all')
    expect(unicode.position).toBe('v=spf1 a:ex'.length)
    expect(unicode.message).toContain('U+00E4')
    expect(error('v=spf1 \u0096all').message).toContain('U+0096')
  })

  test('missing arguments, stray arguments and empty domains', () => {
    expect(error('v=spf1 include').message).toContain("needs ':'")
    expect(error('v=spf1 include:').message).toContain('empty')
    expect(error('v=spf1 -all:foo').message).toContain('takes no argument')
    expect(error('v=spf1 ptr/0').message).toContain("'ptr' takes only")
    expect(error('v=spf1 ip4').message).toContain("needs ':'")
    expect(error('v=spf1 ip6::CAFE::BABE').message).toContain('not a valid ip6 address')
  })

  test('modifier errors: duplicates, empty and malformed values, bad names', () => {
    expect(error('v=spf1 redirect=a.example.com redirect=b.example.com')).toMatchObject({
      term: 'redirect=b.example.com',
      termPosition: 30,
    })
    expect(error('v=spf1 exp=a.example.com exp=b.example.com').message).toContain('more than once')
    expect(error('v=spf1 redirect=').message).toContain('empty')
    expect(error('v=spf1 exp=-all').message).toContain('two labels')
    expect(error('v=spf1 foo=%abc').message).toContain("'%' must be followed by")
    // §7.3: c, r and t are "allowed only in 'exp' text", so not in an unknown modifier either
    // (pyspf 2.0.14 refuses them too; Mail::SPF 2.009 accepts them).
    for (const letter of ['c', 'r', 't', 'C']) {
      expect(error(`v=spf1 foo=%{${letter}} -all`).message).toContain('only allowed in exp text')
    }
    expect(parse('v=spf1 foo=%{d}.%{i}.%{p} -all').unknownModifiers).toHaveLength(1)
    expect(error('v=spf1 1up=foo').message).toContain('unknown mechanism')
    expect(error('v=spf1 =all').message).toContain('unknown mechanism')
    expect(error('v=spf1 redirect:example.com').message).toContain("unknown mechanism 'redirect'")
  })

  test('something that is not an SPF record', () => {
    expect(error('v=spf2 -all').message).toContain('v=spf1')
  })
})

describe('hostile records', () => {
  test('100 terms parse, in order', () => {
    const terms = Array.from({ length: 100 }, (_, i) => `ip4:10.0.${i}.0/24`)
    const record = parse(`v=spf1 ${terms.join(' ')} -all`)
    expect(record.directives).toHaveLength(101)
    expect(record.directives[99]!.text).toBe('ip4:10.0.99.0/24')
  })

  test('a 64 KB record is parsed in linear time', () => {
    const term = 'ip4:192.0.2.1 '
    const text = `v=spf1 ${term.repeat(Math.ceil(65536 / term.length))}-all`
    const started = performance.now()
    const record = parse(text)
    expect(record.directives.length).toBeGreaterThan(4600)
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('a huge malformed term is reported, not looped on', () => {
    // An even run of '%' is valid ('%%' escapes); one more makes the last '%' dangle.
    expect(parseSpfRecord(`v=spf1 a:${'%'.repeat(100_000)}`).ok).toBe(true)
    const e = error(`v=spf1 a:${'%'.repeat(100_001)}`)
    expect(e.position).toBe(9 + 100_000)
    expect(e.message).toContain("'%'")
    expect(error(`v=spf1 ip4:${'9'.repeat(100_000)}`).message).toContain('not a valid ip4 address')
    expect(error(`v=spf1 a/${'1'.repeat(1000)}`).message).toContain('prefix length')
  })
})
