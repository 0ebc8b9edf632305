import { describe, expect, test } from 'bun:test'
import { analyzeSpf } from '../../../domain/spf/analysis.ts'
import { splitTxtStrings } from '../../../domain/spf/chain.ts'
import { checkHost } from '../../../domain/spf/check-host.ts'
import { a, aaaa, memoryDns, mx, txt, type Zone, type ZoneEntry } from '../../support/memory-dns.ts'

async function analyze(zone: Zone, domain = 'example.com') {
  return analyzeSpf({ dns: memoryDns(zone) }, { domain })
}

describe('flattening', () => {
  test('include, a and mx become networks; exists, ptr and macros are kept and reported', async () => {
    const analysis = await analyze({
      'example.com': [
        txt('v=spf1 a mx include:p.test exists:%{i}.bl.example.com ptr ~all'),
        a('192.0.2.1'),
        mx(10, 'mx.example.com'),
      ],
      'mx.example.com': [a('192.0.2.2'), aaaa('2001:db8::2')],
      'p.test': [txt('v=spf1 ip4:198.51.100.0/24 -all')],
    })
    const flat = analysis.flattened!
    expect(flat.networks).toEqual([
      'ip4:192.0.2.1',
      'ip4:192.0.2.2',
      'ip6:2001:db8::2',
      'ip4:198.51.100.0/24',
    ])
    expect(flat.unflattenable.map((u) => u.term)).toEqual(['exists:%{i}.bl.example.com', 'ptr'])
    expect(flat.records).toHaveLength(1)
    expect(flat.records[0]!.text).toBe(
      'v=spf1 ip4:192.0.2.1 ip4:192.0.2.2 ip6:2001:db8::2 ip4:198.51.100.0/24 exists:%{i}.bl.example.com ptr ~all',
    )
    expect(flat).toMatchObject({ lookupsBefore: 5, lookupsAfter: 2, lookupsSaved: 3 })
  })

  test('an include with its own exceptions flattens to its exact pass set', async () => {
    const analysis = await analyze({
      'example.com': [txt('v=spf1 -include:deny.test include:p.test -all')],
      'deny.test': [txt('v=spf1 ip4:203.0.113.66 -all')],
      'p.test': [txt('v=spf1 -ip4:198.51.100.5 ip4:198.51.100.0/29 ~all')],
    })
    expect(analysis.flattened!.networks).toEqual([
      '-ip4:203.0.113.66',
      'ip4:198.51.100.0/30',
      'ip4:198.51.100.4',
      'ip4:198.51.100.6/31',
    ])
  })

  test('big lists: the root keeps all and exp=, "+" terms move to included records', async () => {
    const nets = Array.from({ length: 200 }, (_, i) => `ip4:10.0.${i}.0/24`).join(' ')
    const notSpf = await analyze({
      'example.com': [txt('v=spf1 include:big.test -all exp=why.%{d}')],
      'big.test': [txt(nets)],
    })
    // big.test's text is not an SPF record: the include is a permerror and is kept as written.
    expect(notSpf.flattened!.unflattenable[0]!.term).toBe('include:big.test')

    const zone: Zone = { 'example.com': [txt('v=spf1 include:big.test -all exp=why.%{d}')] }
    zone['big.test'] = [txt(`v=spf1 ${nets}`)]
    const flat = (await analyze(zone)).flattened!
    expect(flat).toMatchObject({ method: 'include', caveats: [] })
    expect(flat.networks).toHaveLength(200)
    const [root, ...chained] = flat.records
    expect(chained.length).toBeGreaterThan(5)
    for (const record of flat.records) {
      expect(record.bytes).toBeLessThan(512)
      expect(record.strings.every((s) => s.length <= 255)).toBe(true)
      expect(record.strings.join('')).toBe(record.text)
    }
    expect(root!.name).toBe('example.com')
    expect(root!.text).toEndWith(' -all exp=why.%{d}')
    chained.forEach((record, i) => {
      expect(record.name).toBe(`_spf${i + 1}.example.com`)
      expect(root!.text).toContain(`include:${record.name}`)
      expect(record.text).toMatch(/^v=spf1 ip4:\S+( ip4:\S+)*$/)
    })
    // Whatever fits in the root record stays there instead of costing a lookup.
    expect(root!.text).toStartWith('v=spf1 ip4:10.0.0.0/24 ')
    expect(flat.lookupsAfter).toBe(chained.length)
    expect(flat.lookupsSaved).toBe(1 - chained.length)
  })

  test('terms other than "+" stay in the root record, in order', async () => {
    const nets = Array.from({ length: 60 }, (_, i) => `ip4:192.0.2.${i}`).join(' ')
    const more = Array.from({ length: 60 }, (_, i) => `ip4:198.51.100.${i}`).join(' ')
    const dns = memoryDns({ 'example.com': [txt(`v=spf1 ${nets} -ip4:203.0.113.0/24 ${more} ~all`)] })
    const flat = (await analyzeSpf({ dns }, { domain: 'example.com' })).flattened!
    expect(flat.method).toBe('include')
    const root = flat.records[0]!.text
    const deny = root.indexOf('-ip4:203.0.113.0/24')
    expect(deny).toBeGreaterThan(0)
    const refs = [...root.matchAll(/include:(_spf\d+)\.example\.com/g)].map((m) => ({
      at: m.index,
      name: m[1],
    }))
    const chunk = (name: string) => flat.records.find((r) => r.name === `${name}.example.com`)!.text
    for (const ref of refs) {
      const holds192 = chunk(ref.name!).includes('192.0.2.')
      expect(holds192).toBe(ref.at < deny)
    }
  })

  test('kept terms are written out in full only in chained records, where <domain> differs', async () => {
    const nets = Array.from({ length: 40 }, (_, i) => `ip4:192.0.2.${i}`).join(' ')
    const dns = memoryDns({ 'example.com': [txt(`v=spf1 ptr ${nets} exists:%{d}.x.example.com ptr -all`)] })
    const flat = (await analyzeSpf({ dns }, { domain: 'example.com' })).flattened!
    expect(flat.records.length).toBeGreaterThan(1)
    expect(flat.records[0]!.text).toStartWith('v=spf1 ptr ip4:192.0.2.0 ')
    const lastRecord = flat.records[flat.records.length - 1]!.text
    expect(lastRecord).toEndWith('exists:example.com.x.example.com ptr:example.com')
  })

  test('redirect-chaining when even the root cannot hold the other terms', async () => {
    const denies = Array.from({ length: 20 }, (_, i) => `-ip4:192.0.2.${i}`).join(' ')
    const dns = memoryDns({ 'example.com': [txt(`v=spf1 ${denies} ip4:198.51.100.0/24 -all exp=why.%{d}`)] })
    const flat = (await analyzeSpf({ dns }, { domain: 'example.com', flatten: { maxRecordBytes: 200 } }))
      .flattened!
    expect(flat.method).toBe('redirect')
    expect(flat.caveats).toHaveLength(1)
    expect(flat.records[0]!.text).toEndWith('redirect=_spf1.example.com exp=why.%{d}')
    expect(flat.records[1]!.text).toEndWith('exp=why.example.com')
    expect(flat.records[flat.records.length - 1]!.text).toEndWith('-all exp=why.example.com')
  })

  test('custom limits and chain label', async () => {
    const nets = Array.from({ length: 30 }, (_, i) => `ip4:192.0.2.${i}`).join(' ')
    const dns = memoryDns({ 'example.com': [txt(`v=spf1 ${nets} -all`)] })
    const flat = (
      await analyzeSpf({ dns }, { domain: 'example.com', flatten: { chainLabel: '_f', maxRecordBytes: 200 } })
    ).flattened!
    expect(flat.records.every((r) => r.bytes < 200)).toBe(true)
    expect(flat.records[1]!.name).toBe('_f1.example.com')
  })

  test('splitTxtStrings keeps every character and prefers breaking after a space', () => {
    const text = `v=spf1 ${'ip4:192.0.2.1 '.repeat(30)}-all`
    const strings = splitTxtStrings(text)
    expect(strings.join('')).toBe(text)
    expect(strings.every((s) => s.length <= 255)).toBe(true)
    expect(strings[0]!.endsWith(' ')).toBe(true)
    expect(splitTxtStrings('x'.repeat(600)).map((s) => s.length)).toEqual([255, 255, 90])
  })

  test('an include whose pass set would fragment into too many networks is kept, quickly', async () => {
    const holes = Array.from({ length: 3000 }, (_, i) => `-ip4:10.${i >> 8}.${i & 255}.1`).join(' ')
    const zone = {
      'example.com': [txt('v=spf1 include:holes.test -all')],
      'holes.test': [txt(`v=spf1 ${holes} +all`)],
    }
    const started = performance.now()
    const flat = (await analyze(zone)).flattened!
    expect(performance.now() - started).toBeLessThan(3000)
    expect(flat.unflattenable).toEqual([
      { domain: 'example.com', term: 'include:holes.test', reason: 'too many networks' },
    ])
    expect(flat.records[0]!.text).toBe('v=spf1 include:holes.test -all')
  })

  test('no record, no flattening', async () => {
    expect((await analyze({})).flattened).toBeNull()
  })
})

describe('the flattened records evaluate exactly like the original', () => {
  const original: Zone = {
    'example.com': [
      txt('v=spf1 a -include:deny.test include:p.test mx:%{d} exists:%{i}.ok.example.com redirect=tail.test'),
      a('192.0.2.10'),
      mx(5, 'mx.example.com'),
    ],
    'mx.example.com': [a('192.0.2.20'), aaaa('2001:db8::20')],
    'deny.test': [txt('v=spf1 ip4:198.51.100.128/25 -all')],
    'p.test': [txt('v=spf1 -ip4:198.51.100.200 ip4:198.51.100.0/24 include:q.test ?all')],
    'q.test': [txt('v=spf1 ip6:2001:db8:4::/48 redirect=r.test')],
    'r.test': [txt('v=spf1 ~ip4:203.0.113.0/28 ip4:203.0.113.0/24 -all')],
    'tail.test': [txt('v=spf1 ip4:100.64.0.0/10 -all')],
    'why.example.com': [txt('%{i} may not send for %{d}')],
    '203.0.113.250.ok.example.com': [a('127.0.0.2')],
  }

  // Addresses on and around every boundary in the zone, plus a deterministic spread.
  const ips = [
    '192.0.2.10',
    '192.0.2.20',
    '2001:db8::20',
    '198.51.100.1',
    '198.51.100.127',
    '198.51.100.128',
    '198.51.100.200',
    '198.51.100.201',
    '2001:db8:4::1',
    '2001:db8:5::1',
    '203.0.113.1',
    '203.0.113.16',
    '203.0.113.250',
    '100.64.0.1',
    '100.127.255.255',
    '100.128.0.0',
    '10.0.0.1',
  ]
  for (let i = 0; i < 200; i++)
    ips.push(`${(i * 37) % 256}.${(i * 91) % 256}.${(i * 13) % 256}.${(i * 7) % 256}`)

  // The same policy ending in a redirect (inlined by flattening) or in -all with exp=.
  const variants: [string, Zone, number][] = [
    ['redirect', original, 8],
    [
      'exp',
      {
        ...original,
        'example.com': original['example.com']!.map((entry) =>
          entry.type === 'TXT'
            ? txt(`${entry.strings.join('').replace(' redirect=tail.test', '')} -all exp=why.%{d}`)
            : entry,
        ),
      },
      7,
    ],
  ]
  // 512: one record; 200 and 120: include-chained; 80: too small for that, so redirect-chained.
  for (const [name, zone, lookups] of variants) {
    for (const maxRecordBytes of [512, 200, 120, 80]) {
      test(`${name}: every sampled client address (records under ${maxRecordBytes} bytes)`, async () => {
        const dns = memoryDns(zone)
        const flat = (await analyzeSpf({ dns }, { domain: 'example.com', flatten: { maxRecordBytes } }))
          .flattened!
        expect(flat.lookupsBefore).toBe(lookups)
        expect(flat.method).toBe(
          maxRecordBytes === 512 ? 'single' : maxRecordBytes === 80 ? 'redirect' : 'include',
        )
        const published: Zone = { ...zone }
        for (const record of flat.records) {
          const others = (published[record.name] ?? []).filter((entry: ZoneEntry) => entry.type !== 'TXT')
          published[record.name] = [...others, txt(...record.strings)]
        }
        for (const ip of ips) {
          const input = { ip, domain: 'example.com', sender: 's@example.com', helo: 'h', now: new Date(0) }
          const before = await checkHost({ dns: memoryDns(zone) }, { ...input, defaultExplanation: 'D' })
          const after = await checkHost({ dns: memoryDns(published) }, { ...input, defaultExplanation: 'D' })
          // The caveats say when the explanation's %{d} changes or the chain is over the lookup limit.
          if (flat.lookupsAfter > 10) {
            expect(flat.caveats.some((c) => c.includes('over the limit'))).toBe(true)
            continue
          }
          const explained = flat.caveats.length === 0
          const show = (r: typeof before) => `${ip} ${r.result} ${explained ? r.explanation : ''}`
          expect(show(after)).toBe(show(before))
        }
      })
    }
  }
})
