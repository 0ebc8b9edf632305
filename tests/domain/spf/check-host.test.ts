import { describe, expect, test } from 'bun:test'
import type { DnsResolver } from '../../../domain/dns/ports.ts'
import { type CheckHostInput, checkHost } from '../../../domain/spf/check-host.ts'
import { a, aaaa, cname, memoryDns, mx, ptr, TIMEOUT, txt, type Zone } from '../../support/memory-dns.ts'

const base: CheckHostInput = {
  ip: '192.0.2.10',
  domain: 'example.com',
  sender: 'alice@example.com',
  helo: 'mail.example.com',
  now: new Date('2026-01-01T00:00:00Z'),
}

async function check(zone: Zone, input: Partial<CheckHostInput> = {}) {
  const dns = memoryDns(zone)
  const result = await checkHost({ dns }, { ...base, ...input })
  return { ...result, queries: dns.queries }
}

describe('results and explanations', () => {
  test('qualifiers give their results, and the deciding mechanism is reported', async () => {
    const zone = { 'example.com': [txt('v=spf1 ip4:192.0.2.0/24 ~all')] }
    expect(await check(zone)).toMatchObject({ result: 'pass', mechanism: 'ip4:192.0.2.0/24', lookups: 0 })
    expect(await check(zone, { ip: '198.51.100.1' })).toMatchObject({ result: 'softfail', mechanism: '~all' })
  })

  test('no record is none, a broken one is permerror with the location', async () => {
    expect((await check({ 'example.com': [a('192.0.2.1')] })).result).toBe('none')
    expect((await check({})).result).toBe('none')
    const broken = await check({ 'example.com': [txt('v=spf1 a:bad..example.com/99 -all')] })
    expect(broken.result).toBe('permerror')
    expect(broken.reason).toContain(
      "at 'a:bad..example.com/99' (position 25): invalid ip4 prefix length '/99'",
    )
  })

  test('fail carries the exp= text, macro-expanded in the failing record', async () => {
    const zone = {
      'example.com': [txt('v=spf1 -all exp=why.%{d}')],
      'why.example.com': [txt('%{i} is not one of %{d}', "'s hosts (sender %{s})")],
    }
    const result = await check(zone)
    expect(result).toMatchObject({ result: 'fail', lookups: 0 })
    expect(result.explanation).toBe("192.0.2.10 is not one of example.com's hosts (sender alice@example.com)")
  })

  test('the default explanation is expanded; without one there is none', async () => {
    const zone = { 'example.com': [txt('v=spf1 -all')] }
    const withDefault = await check(zone, { defaultExplanation: 'See https://example.net/spf?d=%{d}&i=%{I}' })
    expect(withDefault.explanation).toBe('See https://example.net/spf?d=example.com&i=192.0.2.10')
    expect((await check(zone)).explanation).toBeUndefined()
    expect(
      (await check({ 'example.com': [txt('v=spf1 ~all exp=x.example.com')] })).explanation,
    ).toBeUndefined()
  })

  test('the exp= lookup is not counted against either limit (§4.6.4)', async () => {
    const terms = Array.from({ length: 10 }, (_, i) => `a:h${i}.example.com`).join(' ')
    const zone: Zone = { 'example.com': [txt(`v=spf1 ${terms} -all exp=gone.example.com`)] }
    for (let i = 0; i < 10; i++) zone[`h${i}.example.com`] = [a('198.51.100.1')]
    const result = await check(zone, { defaultExplanation: 'DEFAULT' })
    expect(result).toMatchObject({ result: 'fail', lookups: 10, voidLookups: 0, explanation: 'DEFAULT' })
    expect(result.queries).toContain('TXT gone.example.com')
  })

  test('a domain that cannot be checked is none without any DNS query (§4.3)', async () => {
    for (const domain of [
      'localhost',
      '[192.0.2.1]',
      'a..example.com',
      `${'x'.repeat(64)}.example.com`,
      '1.2.3.4',
    ]) {
      const result = await check({}, { domain })
      expect(result.result).toBe('none')
      expect(result.queries).toEqual([])
    }
    expect((await check({ 'example.com': [txt('v=spf1 -all')] }, { domain: 'example.com.' })).result).toBe(
      'fail',
    )
  })

  test('an address that is not an IP is a permerror, not an exception', async () => {
    expect((await check({}, { ip: 'not-an-ip' })).result).toBe('permerror')
  })

  test('an IPv4-mapped client is checked as IPv4 (§5)', async () => {
    const zone = { 'example.com': [txt('v=spf1 ip6:::/0 ip4:192.0.2.10 -all')] }
    expect(await check(zone, { ip: '::ffff:192.0.2.10' })).toMatchObject({
      result: 'pass',
      mechanism: 'ip4:192.0.2.10',
    })
  })
})

describe('DNS failures', () => {
  test('timeouts and server failures are temperror', async () => {
    expect((await check({ 'example.com': [TIMEOUT] })).result).toBe('temperror')
    const zone = { 'example.com': [txt('v=spf1 a:slow.example.com -all')], 'slow.example.com': [TIMEOUT] }
    expect(await check(zone)).toMatchObject({ result: 'temperror', mechanism: 'a:slow.example.com' })
  })

  test('a resolver that throws is a temperror, not a crash', async () => {
    const dns: DnsResolver = {
      resolve: async () => {
        throw new Error('socket closed')
      },
    }
    const result = await checkHost({ dns }, base)
    expect(result.result).toBe('temperror')
    expect(result.reason).toContain('socket closed')
  })

  test('MX host lookup failure is temperror; PTR failure just does not match (§5.5)', async () => {
    const mxZone = {
      'example.com': [txt('v=spf1 mx -all'), mx(10, 'mx1.example.com')],
      'mx1.example.com': [TIMEOUT],
    }
    expect((await check(mxZone)).result).toBe('temperror')
    const ptrZone = { 'example.com': [txt('v=spf1 ptr -all')], '10.2.0.192.in-addr.arpa': [TIMEOUT] }
    expect((await check(ptrZone)).result).toBe('fail')
  })
})

describe('processing limits (§4.6.4)', () => {
  test('the 11th DNS-querying term is a permerror and is never queried', async () => {
    const zone: Zone = {}
    const terms = Array.from({ length: 11 }, (_, i) => `a:h${i}.example.com`).join(' ')
    zone['example.com'] = [txt(`v=spf1 ${terms} -all`)]
    for (let i = 0; i < 11; i++) zone[`h${i}.example.com`] = [a('198.51.100.1')]
    const result = await check(zone)
    expect(result).toMatchObject({ result: 'permerror', lookups: 11, mechanism: 'a:h10.example.com' })
    expect(result.queries).toContain('A h9.example.com')
    expect(result.queries).not.toContain('A h10.example.com')
  })

  test('a third void lookup is a permerror', async () => {
    const zone = {
      'example.com': [txt('v=spf1 a:n1.example.com mx:n2.example.com exists:n3.example.com -all')],
    }
    expect(await check(zone)).toMatchObject({
      result: 'permerror',
      voidLookups: 3,
      mechanism: 'exists:n3.example.com',
    })
  })

  test('the %{p} macro is not a term of the 10-term limit (RFC 7208 §4.6.4)', async () => {
    // Nine a: terms, then exists:%{p}...: ten terms; the PTR query of %{p} is not an eleventh.
    // pyspf 2.0.14 and Mail::SPF 2.009 give pass here.
    const terms = Array.from({ length: 9 }, (_, i) => `a:h${i}.example.com`).join(' ')
    const zone: Zone = {
      '10.2.0.192.in-addr.arpa': [ptr('mail.example.com')],
      'mail.example.com': [a('192.0.2.10')],
      'mail.example.com.ok.example.com': [a('127.0.0.2')],
    }
    for (let i = 0; i < 9; i++) zone[`h${i}.example.com`] = [a('198.51.100.1')]
    zone['example.com'] = [txt(`v=spf1 ${terms} exists:%{p}.ok.example.com -all`)]
    const result = await check(zone)
    expect(result).toMatchObject({ result: 'pass', lookups: 10, mechanism: 'exists:%{p}.ok.example.com' })
    expect(result.queries).toContain('PTR 10.2.0.192.in-addr.arpa')
    // An eleventh term is still one too many.
    zone['example.com'] = [txt(`v=spf1 ${terms} a:h0.example.com exists:%{p}.ok.example.com -all`)]
    expect(await check(zone)).toMatchObject({ result: 'permerror', lookups: 11 })
  })

  test('a %{p} PTR lookup that finds nothing is a void lookup (RFC 7208 §4.6.4)', async () => {
    // No PTR for the client: the PTR query is void (1), unknown.x.example.com is void (2), and
    // nx.example.com is the third: permerror, as pyspf 2.0.14 and Mail::SPF 2.009 give.
    const zone: Zone = {
      'example.com': [txt('v=spf1 exists:%{p}.x.example.com exists:nx.example.com -all')],
    }
    expect(await check(zone)).toMatchObject({
      result: 'permerror',
      voidLookups: 3,
      mechanism: 'exists:nx.example.com',
      lookups: 2,
    })
    // The PTR answer names a host with no address: that address lookup is the void one (pyspf
    // and Mail::SPF agree), so the third void is again nx.example.com.
    const answered: Zone = {
      'example.com': [txt('v=spf1 exists:%{p}.x.example.com exists:nx.example.com -all')],
      '10.2.0.192.in-addr.arpa': [ptr('elsewhere.example.org')],
    }
    expect(await check(answered)).toMatchObject({ result: 'permerror', voidLookups: 3 })
    // A PTR name that resolves but to another address is not void: one void (unknown.x...), then nx.
    answered['elsewhere.example.org'] = [a('198.51.100.9')]
    expect(await check(answered)).toMatchObject({ result: 'fail', voidLookups: 2 })
  })

  test('more than 10 MX records is a permerror; null MX names no host', async () => {
    const many = Array.from({ length: 11 }, (_, i) => mx(i, `mx${i}.example.com`))
    expect((await check({ 'example.com': [txt('v=spf1 mx -all'), ...many] })).result).toBe('permerror')
    const nullMx = { 'example.com': [txt('v=spf1 mx ?all'), mx(0, '.')] }
    expect(await check(nullMx)).toMatchObject({ result: 'neutral', voidLookups: 0 })
  })

  test('only the first 10 PTR names are considered', async () => {
    const names = Array.from({ length: 11 }, (_, i) => ptr(`h${i}.example.com`))
    const zone: Zone = {
      'example.com': [txt('v=spf1 ptr -all')],
      '10.2.0.192.in-addr.arpa': names,
      'h10.example.com': [a('192.0.2.10')],
    }
    const result = await check(zone)
    expect(result.result).toBe('fail')
    expect(result.queries).not.toContain('A h10.example.com')
  })
})

describe('hostile input', () => {
  test('include loops end in permerror after 10 lookups', async () => {
    const zone = {
      'example.com': [txt('v=spf1 include:a.example.net -all')],
      'a.example.net': [txt('v=spf1 include:b.example.net')],
      'b.example.net': [txt('v=spf1 include:a.example.net')],
    }
    const result = await check(zone)
    expect(result).toMatchObject({ result: 'permerror', lookups: 11 })
    expect(result.queries.length).toBeLessThanOrEqual(11)
  })

  test('redirect loops, including to itself, end in permerror', async () => {
    const self = await check({ 'example.com': [txt('v=spf1 redirect=example.com')] })
    expect(self).toMatchObject({ result: 'permerror', lookups: 11 })
    const pair = await check({
      'example.com': [txt('v=spf1 redirect=b.example.com')],
      'b.example.com': [txt('v=spf1 redirect=%{d2}')],
    })
    expect(pair).toMatchObject({ result: 'permerror', lookups: 11 })
  })

  test('a 500-character TXT string and a 2,000-character multi-string record', async () => {
    const terms = Array.from({ length: 40 }, (_, i) => `ip4:198.51.${i}.0/24`).join(' ')
    const long = `v=spf1 ${terms} ip4:192.0.2.10 -all`
    expect(long.length).toBeGreaterThan(500)
    expect((await check({ 'example.com': [txt(long)] })).result).toBe('pass')
    const pieces = Array.from({ length: 8 }, () => 'ip4:203.0.113.1 '.repeat(16))
    const multi = await check({ 'example.com': [txt('v=spf1 ', ...pieces, 'ip4:192.0.2.10')] })
    expect(multi).toMatchObject({ result: 'pass', mechanism: 'ip4:192.0.2.10' })
  })

  test('100 terms: all evaluated when they need no DNS', async () => {
    const terms = Array.from({ length: 99 }, (_, i) => `-ip4:10.0.${i}.0/24`).join(' ')
    const zone = { 'example.com': [txt(`v=spf1 ${terms} a -all`), a('192.0.2.10')] }
    expect(await check(zone)).toMatchObject({ result: 'pass', mechanism: 'a', lookups: 1 })
  })

  test('100 DNS terms stop at the limit', async () => {
    const terms = Array.from({ length: 100 }, (_, i) => `a:h${i}.example.com`).join(' ')
    const zone: Zone = { 'example.com': [txt(`v=spf1 ${terms} -all`)] }
    for (let i = 0; i < 100; i++) zone[`h${i}.example.com`] = [a('198.51.100.1')]
    const result = await check(zone)
    expect(result.result).toBe('permerror')
    expect(result.queries).toHaveLength(11)
  })

  test('unicode: in the record, the domain, the sender and the explanation', async () => {
    expect((await check({ 'example.com': [txt('v=spf1 a:exämple.com -all')] })).result).toBe('permerror')
    expect((await check({}, { domain: 'exämple.com' })).result).toBe('none')
    const zone = {
      'example.com': [txt('v=spf1 exists:%{L}.u.example.com -all exp=e.example.com')],
      'j%C3%B6rg.u.example.com': [a('127.0.0.2')],
      'e.example.com': [txt('Grüße')],
    }
    expect((await check(zone, { sender: 'jörg@example.com' })).result).toBe('pass')
    const failed = await check(zone, { sender: 'jürgen@example.com', defaultExplanation: 'DEFAULT' })
    expect(failed).toMatchObject({ result: 'fail', explanation: 'DEFAULT' })
    expect(failed.queries).toContain('A j%C3%BCrgen.u.example.com')
  })

  test('macros expanding past 253 characters are truncated from the left before the query', async () => {
    const local = Array.from({ length: 60 }, (_, i) => `part${i}`).join('.')
    const zone = { 'example.com': [txt('v=spf1 exists:%{l}.%{l}.bl.example.com -all')] }
    const result = await check(zone, { sender: `${local}@example.com` })
    expect(result.result).toBe('fail')
    const asked = result.queries.find((q) => q.startsWith('A '))!.slice(2)
    expect(asked.length).toBeLessThanOrEqual(253)
    expect(asked).toEndWith('part59.bl.example.com')
  })

  test('a macro that yields a label over 63 characters does not match (no query)', async () => {
    const zone = { 'example.com': [txt('v=spf1 a:%{l}.example.com -all')] }
    const result = await check(zone, { sender: `${'x'.repeat(64)}@example.com` })
    expect(result.result).toBe('fail')
    expect(result.queries).toEqual(['TXT example.com'])
  })

  test('CNAME chains are followed; CNAME loops are DNS errors', async () => {
    const zone = {
      'example.com': [cname('one.example.net')],
      'one.example.net': [cname('two.example.net')],
      'two.example.net': [txt('v=spf1 a:host.example.org -all')],
      'host.example.org': [cname('real.example.org')],
      'real.example.org': [a('192.0.2.10'), aaaa('2001:db8::10')],
    }
    expect(await check(zone)).toMatchObject({ result: 'pass', mechanism: 'a:host.example.org' })
    expect(await check(zone, { ip: '2001:db8::10' })).toMatchObject({ result: 'pass' })
    const loop = { 'example.com': [cname('loop.example.net')], 'loop.example.net': [cname('example.com')] }
    expect((await check(loop)).result).toBe('temperror')
  })

  test('many TXT records of which two are SPF: permerror', async () => {
    const noise = Array.from({ length: 1000 }, (_, i) => txt(`verification-${i}`))
    const zone = { 'example.com': [...noise, txt('v=spf1 -all'), txt('v=spf1 +all')] }
    expect((await check(zone)).result).toBe('permerror')
  })

  test('a deep include chain: 10 levels pass, 11 exceed the limit', async () => {
    const chain = (depth: number) => {
      const zone: Zone = { 'example.com': [txt('v=spf1 include:l1.example.net -all')] }
      for (let i = 1; i < depth; i++)
        zone[`l${i}.example.net`] = [txt(`v=spf1 include:l${i + 1}.example.net`)]
      zone[`l${depth}.example.net`] = [txt('v=spf1 ip4:192.0.2.10')]
      return zone
    }
    expect(await check(chain(10))).toMatchObject({ result: 'pass', lookups: 10 })
    expect(await check(chain(11))).toMatchObject({ result: 'permerror', lookups: 11 })
  })
})
