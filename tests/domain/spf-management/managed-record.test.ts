import { describe, expect, test } from 'bun:test'
import type { Failure } from '../../../domain/shared/result.ts'
import { resolveSpfTree } from '../../../domain/spf/include-tree.ts'
import { isQueryableName } from '../../../domain/spf/lookups.ts'
import {
  buildManagedRecord,
  candidateRecord,
  domainLabel,
  hostedName,
  type ManagedSource,
  type ManagedSpfConfig,
  userRecordWithInclude,
  validateSources,
} from '../../../domain/spf-management/managed-record.ts'
import { memoryDns, txt } from '../../support/memory-dns.ts'

const ZONE = 'spf.dmarcwatch.test'
const HASHED = /^[a-z0-9-]*[a-z0-9]---[a-z2-7]{20}$/

function errorsOf(result: { ok: boolean; failure?: Failure }): Record<string, string[]> {
  if (result.ok || result.failure?.code !== 'validation_failed') throw new Error('expected validation_failed')
  return result.failure.errors
}

describe('domain labels', () => {
  test('readable, case- and trailing-dot-insensitive, hyphens escaped so names cannot collide', () => {
    expect(domainLabel('example.com')).toBe('example-com')
    expect(domainLabel('Example.COM.')).toBe('example-com')
    expect(domainLabel('my-shop.example')).toBe('my--shop-example')
    expect(domainLabel('my.shop-example')).toBe('my-shop--example')
    expect(domainLabel('xn--bcher-kva.example')).toBe('xn----bcher--kva-example')
    const tricky = ['a-b.com', 'a.b-com', 'a--b.com', 'a.b.com', 'a-b-c.com', 'a.b-c.com', 'a-b.c.com']
    expect(new Set(tricky.map((name) => domainLabel(name))).size).toBe(tricky.length)
    expect(hostedName(domainLabel('example.com'), 'SPF.dmarcwatch.test.')).toBe(`example-com.${ZONE}`)
  })

  test('a name whose readable label would pass 63 octets gets a readable prefix and a hash', () => {
    const long = `${'a'.repeat(40)}.${'b'.repeat(30)}.example`
    const label = domainLabel(long)
    expect(label).toMatch(HASHED)
    expect(label.length).toBeLessThanOrEqual(63)
    expect(label.startsWith('a'.repeat(40))).toBe(true)
    expect(domainLabel(long.toUpperCase())).toBe(label)
    // Same first 60 characters, different names: different labels.
    expect(domainLabel(`${'a'.repeat(40)}.${'b'.repeat(30)}.example2`)).not.toBe(label)
    const longest = `${'c'.repeat(62)}.${Array.from({ length: 3 }, () => 'c'.repeat(61)).join('.')}.test`
    expect(longest.length).toBe(253)
    const hosted = hostedName(domainLabel(longest), ZONE)
    expect(isQueryableName(`_spf99.${hosted}`)).toBe(true)
    // Exactly 63 readable octets is still readable.
    const edge = `${'d'.repeat(58)}.test`
    expect(domainLabel(edge)).toBe(`${'d'.repeat(58)}-test`)
    expect(domainLabel(`${'d'.repeat(59)}.test`)).toMatch(HASHED)
  })

  test('with a secret salt every label is an opaque keyed hash; names that are not LDH are hashed', () => {
    const salted = domainLabel('example.com', 's3cret')
    expect(salted).toMatch(/^h---[a-z2-7]{20}$/)
    expect(domainLabel('EXAMPLE.com.', 's3cret')).toBe(salted)
    expect(domainLabel('example.com', 'other')).not.toBe(salted)
    expect(domainLabel('example.com', '')).toBe('example-com')
    expect(domainLabel('mail_x.example')).toMatch(/^h---[a-z2-7]{20}$/)
  })
})

describe('validating sources', () => {
  test('normalises case, trailing dots and host bits, and drops duplicates keeping the first', () => {
    const result = validateSources(
      [
        { kind: 'include', domain: ' SendGrid.NET. ', label: 'SendGrid', serviceId: 'sendgrid' },
        { kind: 'ip4', network: '192.0.2.77/24' },
        { kind: 'include', domain: 'sendgrid.net', label: 'again' },
        { kind: 'ip6', network: '2001:DB8::1' },
        { kind: 'ip4', network: '192.0.2.0/24' },
        { kind: 'a', domain: '_Relay.Example.com' },
        { kind: 'include', domain: '%{ir}.%{V}._spf.Example.net' },
      ],
      ZONE,
    )
    expect(result).toEqual({
      ok: true,
      value: [
        { kind: 'include', domain: 'sendgrid.net', label: 'SendGrid', serviceId: 'sendgrid' },
        { kind: 'ip4', network: '192.0.2.0/24' },
        { kind: 'ip6', network: '2001:db8::1' },
        { kind: 'a', domain: '_relay.example.com' },
        // Macro letters are case-sensitive (%{V} URL-escapes): kept as written.
        { kind: 'include', domain: '%{ir}.%{V}._spf.Example.net' },
      ],
    })
  })

  test('a network wider than /8 (IPv4) or /16 (IPv6) is refused: it would authorise a share of the Internet', () => {
    // Found by a hostile-input sweep: 198.51.100.0/1 was kept as 128.0.0.0/1, half of IPv4.
    const errors = errorsOf(
      validateSources(
        [
          { kind: 'ip4', network: '198.51.100.0/1' },
          { kind: 'ip4', network: '10.0.0.0/7' },
          { kind: 'ip6', network: '2001:db8::/15' },
        ] as ManagedSource[],
        ZONE,
      ),
    )
    expect(Object.keys(errors)).toEqual(['sources[0].network', 'sources[1].network', 'sources[2].network'])
    expect(errors['sources[0].network']![0]).toBe(
      '/1 would authorise 2147483648 addresses: give a network of /8 or narrower',
    )
    const widest = validateSources(
      [
        { kind: 'ip4', network: '40.0.0.0/8' },
        { kind: 'ip6', network: '2001:db8::/16' },
      ] as ManagedSource[],
      ZONE,
    )
    expect(widest.ok).toBe(true)
  })

  test('every invalid source is reported at its index with a precise message', () => {
    const sources = [
      { kind: 'include', domain: 'ok.example' },
      { kind: 'include', domain: 'bad..example' },
      { kind: 'mx', domain: '192.0.2.1' },
      { kind: 'ip4', network: '2001:db8::1' },
      { kind: 'ip4', network: '192.0.2.0/33' },
      { kind: 'ip6', network: '::/0' },
      { kind: 'a', domain: 'bücher.example' },
      { kind: 'ptr', domain: 'example.com' },
      { kind: 'include', domain: '%{d}.spf.example' },
      { kind: 'include', domain: `${'x'.repeat(64)}.example` },
      { kind: 'ip4', network: '192.0.2.1', label: 7 },
    ] as unknown as ManagedSource[]
    const result = validateSources(sources, ZONE)
    const errors = errorsOf(result)
    expect(Object.keys(errors)).toEqual([
      'sources[1].domain',
      'sources[2].domain',
      'sources[3].network',
      'sources[4].network',
      'sources[5].network',
      'sources[6].domain',
      'sources[7].kind',
      'sources[8].domain',
      'sources[9].domain',
      'sources[10].label',
    ])
    expect(errors['sources[2].domain']).toEqual([
      "'192.0.2.1' is an IP address, not a domain: add it as an ip4 or ip6 source",
    ])
    expect(errors['sources[3].network']).toEqual(["'2001:db8::1' is an IPv6 address: use kind ip6"])
    expect(errors['sources[4].network']).toEqual(["'/33' is not a prefix length from 1 to 32"])
    expect(errors['sources[5].network']![0]).toContain('every ip6 address')
    expect(errors['sources[6].domain']![0]).toContain('A-label')
    expect(errors['sources[8].domain']![0]).toContain('%{d}')
    expect(errors['sources[9].domain']![0]).toContain('1-63 octets')
    if (!result.ok && result.failure.code === 'validation_failed') {
      expect(result.failure.message).toStartWith('sources[1].domain: ')
      expect(result.failure.message).toEndWith('(and 9 more)')
    }
  })

  test('an include into the hosted zone is a loop', () => {
    const errors = errorsOf(
      validateSources(
        [
          { kind: 'include', domain: `Other-Customer.${ZONE}.` },
          { kind: 'include', domain: ZONE },
          { kind: 'include', domain: `%{i}.${ZONE}` },
          { kind: 'a', domain: `relay.not${ZONE}` },
        ],
        ZONE,
      ),
    )
    expect(Object.keys(errors)).toEqual(['sources[0].domain', 'sources[1].domain', 'sources[2].domain'])
    expect(errors['sources[0].domain']![0]).toContain('a loop, RFC 7208 §5.2')
  })
})

const config = (
  sources: ManagedSource[],
  flatten: ManagedSpfConfig['flatten'] = 'auto',
): ManagedSpfConfig => ({
  sources,
  all: '~all',
  flatten,
})
const build = (c: ManagedSpfConfig, domain = 'example.com') =>
  buildManagedRecord({ domain, zone: ZONE, config: c, resolved: null })

describe('building without DNS', () => {
  test('the candidate lists networks first, then names, then all', () => {
    const c = config([
      { kind: 'include', domain: 'a.example' },
      { kind: 'ip6', network: '2001:db8::/32' },
      { kind: 'mx', domain: 'example.com' },
      { kind: 'ip4', network: '192.0.2.1' },
    ])
    expect(candidateRecord(c)).toBe(
      'v=spf1 ip6:2001:db8::/32 ip4:192.0.2.1 include:a.example mx:example.com ~all',
    )
  })

  test('networks only: one record, no lookups, nothing to flatten even when asked', () => {
    const result = build(config([{ kind: 'ip4', network: '192.0.2.0/24' }], 'always'))
    expect(result).toEqual({
      ok: true,
      value: {
        records: [
          {
            name: `example-com.${ZONE}`,
            text: 'v=spf1 ip4:192.0.2.0/24 ~all',
            strings: ['v=spf1 ip4:192.0.2.0/24 ~all'],
          },
        ],
        lookups: 0,
        flattened: false,
        networks: 1,
        caveats: [],
      },
    })
  })

  test('a long list is chained under the hosted name, each chained record costing one lookup', () => {
    const sources = Array.from({ length: 60 }, (_, i) => ({
      kind: 'ip4' as const,
      network: `10.${i}.0.0/16`,
    }))
    const result = build(config(sources, 'never'))
    if (!result.ok) throw new Error('expected ok')
    const { records, lookups } = result.value
    expect(records.length).toBeGreaterThan(1)
    expect(lookups).toBe(records.length - 1)
    for (const [i, record] of records.slice(1).entries())
      expect(record.name).toBe(`_spf${i + 1}.example-com.${ZONE}`)
    for (const record of records) expect(record.text.length + record.strings.length).toBeLessThan(512)
  })

  test('without the resolved tree, includes are counted alone and flattening is refused', () => {
    const c = config([{ kind: 'include', domain: '_spf.provider.example' }])
    const result = build(c)
    expect(result.ok && result.value.caveats).toEqual([
      'the include tree was not resolved: lookups inside included records are not counted',
    ])
    expect(Object.keys(errorsOf(build({ ...c, flatten: 'always' })))).toEqual(['resolved'])
  })

  test('an include of the domain itself is a loop; a tree of another record is refused', async () => {
    const c = config([
      { kind: 'ip4', network: '192.0.2.1' },
      { kind: 'include', domain: 'Example.com' },
    ])
    expect(errorsOf(build(c))['sources[1].domain']![0]).toContain('the domain itself')
    const dns = memoryDns({ [`example-com.${ZONE}`]: [txt('v=spf1 ip4:192.0.2.2 ~all')] })
    const resolved = await resolveSpfTree({ dns }, `example-com.${ZONE}`)
    const ip = config([{ kind: 'ip4', network: '192.0.2.1' }])
    const result = buildManagedRecord({ domain: 'example.com', zone: ZONE, config: ip, resolved })
    expect(Object.keys(errorsOf(result))).toEqual(['resolved'])
  })

  test('bad domain, zone, label and settings are validation failures', () => {
    const ok = config([{ kind: 'ip4', network: '192.0.2.1' }])
    const input = { domain: 'example.com', zone: ZONE, config: ok, resolved: null }
    expect(Object.keys(errorsOf(buildManagedRecord({ ...input, domain: 'bad..com' })))).toEqual(['domain'])
    expect(Object.keys(errorsOf(buildManagedRecord({ ...input, label: 'Not A Label' })))).toEqual(['label'])
    const all = { ...ok, all: '+all' } as unknown as ManagedSpfConfig
    expect(Object.keys(errorsOf(buildManagedRecord({ ...input, config: all })))).toEqual(['all'])
    expect(Object.keys(errorsOf(buildManagedRecord({ ...input, outsideLookups: 10 })))).toEqual([
      'outsideLookups',
    ])
    // A 242-octet zone is a name, but leaves no room for `_spf99.example-com.` below it.
    const deep = `${'y'.repeat(45)}.${Array.from({ length: 3 }, () => 'z'.repeat(63)).join('.')}.test`
    expect(isQueryableName(deep)).toBe(true)
    expect(Object.keys(errorsOf(buildManagedRecord({ ...input, zone: deep })))).toEqual(['zone'])
  })
})

describe('what the user publishes', () => {
  const hosted = `example-com.${ZONE}`

  test('no record: a new one that only includes the hosted record', () => {
    expect(userRecordWithInclude(null, hosted)).toMatchObject({
      record: `v=spf1 include:${hosted} -all`,
      changed: true,
      lookups: 1,
    })
    expect(userRecordWithInclude('google-site-verification=x', hosted).note).toContain('not an SPF record')
  })

  test('an existing record gets the include once, before its all', () => {
    const first = userRecordWithInclude('v=spf1 include:_spf.google.com ip4:192.0.2.1 ~all', hosted)
    expect(first).toMatchObject({
      record: `v=spf1 include:_spf.google.com ip4:192.0.2.1 include:${hosted} ~all`,
      changed: true,
      lookups: 2,
    })
    expect(first.note).toContain('the hosted record may use 8')
    expect(userRecordWithInclude(first.record, hosted)).toMatchObject({
      record: first.record,
      changed: false,
    })
    const spelled = `v=spf1 INCLUDE:${hosted.toUpperCase()}. -all`
    expect(userRecordWithInclude(spelled, hosted)).toMatchObject({
      record: spelled,
      changed: false,
      lookups: 1,
    })
  })

  test('without all: after the last mechanism, before redirect=, which is still counted', () => {
    expect(userRecordWithInclude('v=spf1 mx redirect=_spf.example.net', hosted)).toMatchObject({
      record: `v=spf1 mx include:${hosted} redirect=_spf.example.net`,
      lookups: 3,
    })
    const bare = userRecordWithInclude('v=spf1', hosted)
    expect(bare.record).toBe(`v=spf1 include:${hosted}`)
    expect(bare.note).toContain('no all')
    expect(userRecordWithInclude('v=spf1 a +all', hosted).note).toContain("'+all'")
  })

  test('a broken record is left alone with the reason', () => {
    const result = userRecordWithInclude('v=spf1 ip4:300.0.0.1 -all', hosted)
    expect(result).toMatchObject({ record: 'v=spf1 ip4:300.0.0.1 -all', changed: false })
    expect(result.note).toContain('fix the syntax error')
  })
})
