import { describe, expect, test } from 'bun:test'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { collect, fixtureBytes, type Parsed, xmlFixtures } from './aggregate-support.ts'

// Every XML sample (tests/fixtures/dmarc-aggregate, see SOURCES.md) with the figures it must give.
// The figures were checked against an independent reading (Python ElementTree) where that parser
// accepts the file; the rest are damaged on purpose and checked by hand.

interface Figures {
  variant: 'rfc7489' | 'rfc9990' | 'draft'
  orgName: string
  reportId: string
  begin: number
  end: number
  domain: string
  records: number
  /** Sum of the records' counts: the number of messages reported. */
  messages: number
  check?: (parsed: Parsed) => void
}

const first = (parsed: Parsed) => parsed.records[0]!

const EXPECTED: Record<string, Figures | { error: string; message: string }> = {
  'parsedmarc/aggregate/!example.com!1538204542!1538463818.xml': {
    ...{ variant: 'rfc7489', orgName: '', reportId: 'example.com:1538463741', begin: 1538413632 },
    ...{ end: 1538413632, domain: 'example.com', records: 1, messages: 1 },
    check: (p) => {
      expect(p.metadata!.version).toBeNull()
      expect(p.metadata!.policy).toMatchObject({ adkim: 'r', aspf: 'r', p: 'none', sp: 'reject', pct: 100 })
      expect(first(p)).toMatchObject({ sourceIp: '12.20.127.122', disposition: 'none', dkim: [] })
      expect(first(p).spf).toEqual([{ domain: '', scope: null, result: 'none' }])
    },
  },
  'parsedmarc/aggregate/!large-example.com!1711897200!1711983600.xml': {
    ...{ variant: 'rfc7489', orgName: '', reportId: 'example.com:1711897200', begin: 1711897200 },
    ...{ end: 1711983600, domain: 'example.com', records: 2286, messages: 2286 },
    check: (p) => {
      expect(first(p).sourceIp).toBe('12.20.121.1')
      expect(p.records.at(-1)!.sourceIp).toBe('12.20.129.254')
    },
  },
  'parsedmarc/aggregate/addisonfoods.com!example.com!1536105600!1536191999.xml': {
    ...{ variant: 'rfc7489', orgName: 'addisonfoods.com', reportId: '3ceb5548498640beaeb47327e202b0b9' },
    ...{ begin: 1536105600, end: 1536191999, domain: 'example.com', records: 1, messages: 1 },
    check: (p) => {
      expect(p.metadata!.version).toBe('1.0')
      expect(p.metadata!.policy.fo).toBe('0')
      expect(first(p)).toMatchObject({ envelopeFrom: 'example.com', headerFrom: 'example.com', spf: [] })
      const dkim = {
        domain: 'toptierhighticket.club',
        selector: 'default',
        result: 'pass',
        humanResult: null,
      }
      expect(first(p).dkim).toEqual([dkim])
    },
  },
  'parsedmarc/aggregate/empty_reason.xml': {
    ...{ variant: 'rfc7489', orgName: 'example.org', reportId: '20240125141224705995', begin: 1706159544 },
    ...{ end: 1706185733, domain: 'example.com', records: 1, messages: 2 },
    check: (p) => {
      expect(p.metadata!.extraContactInfo).toBe('https://support.example.org/dmarc')
      // <reason><type></type><comment></comment></reason> says nothing and is not kept.
      expect(first(p).reasons).toEqual([])
      expect(first(p)).toMatchObject({ envelopeTo: 'example.net', envelopeFrom: 'example.edu' })
      expect(first(p).dkim[0]!.humanResult).toBe('2048-bit key')
      expect(first(p).spf).toEqual([{ domain: 'example.edu', scope: 'mfrom', result: 'pass' }])
    },
  },
  'parsedmarc/aggregate/example.net!example.com!1529366400!1529452799.xml': {
    ...{ variant: 'rfc7489', orgName: 'example.net', reportId: 'b043f0e264cf4ea995e93765242f6dfb' },
    ...{ begin: 1529366400, end: 1529452799, domain: 'example.com', records: 1, messages: 1 },
    // The stray `11` after </sp> is mixed content: ignored, and sp keeps its value.
    check: (p) => {
      expect(p.metadata!.policy).toMatchObject({ sp: 'none', pct: 100, fo: '0' })
      expect(first(p)).toMatchObject({ dkim: [], spf: [], sourceIp: '199.230.200.36' })
    },
  },
  'parsedmarc/aggregate/ikea.com!example.de!1538690400!1538776800.xml': {
    ...{ variant: 'rfc7489', orgName: 'ikea.com', reportId: 'aggr_report_2018_10_05_5bc7e9b4f3e8a' },
    ...{ begin: 1538690400, end: 1538776800, domain: 'example.de', records: 1, messages: 1 },
    // <feedback> inside an unclosed <xs:schema>: read, and nothing after </feedback> matters.
    check: (p) => {
      expect(first(p).dkim).toEqual([
        { domain: 'example.de', selector: null, result: 'pass', humanResult: null },
      ])
      expect(first(p).spf).toEqual([{ domain: 'mailrelay.com', scope: 'helo', result: 'none' }])
    },
  },
  'parsedmarc/aggregate/invalid_utf_8.xml': {
    ...{ variant: 'rfc7489', orgName: '', reportId: 'example.com:1538463741', begin: 1538413632 },
    ...{ end: 1538413632, domain: 'example.com', records: 1, messages: 1 },
    // The raw 0x91 byte becomes U+FFFD; the rest of the value survives.
    check: (p) => expect(first(p).headerFrom).toBe('bad_byte\uFFFD'),
  },
  'parsedmarc/aggregate/invalid_xml.xml': {
    ...{ variant: 'rfc7489', orgName: 'veeam.com', reportId: 'sonexushealth.com:1530233361' },
    ...{ begin: 1530133200, end: 1530219600, domain: 'example.com', records: 1, messages: 1 },
    // A `<` that starts no tag is a literal: the address loses its angle brackets like a report id.
    check: (p) => {
      expect(p.metadata!.email).toBe('bad-xml@bad-xml.net')
      expect(first(p).headerFrom).toBe('bad<xml.net')
    },
  },
  'parsedmarc/aggregate/old_draft_from_wiki.xml': {
    ...{ variant: 'rfc7489', orgName: 'acme.com', reportId: '9391651994964116463', begin: 1335571200 },
    ...{ end: 1335657599, domain: 'example.com', records: 1, messages: 2 },
    check: (p) => {
      expect(p.metadata!.extraContactInfo).toBe('http://acme.com/dmarc/support')
      expect(first(p)).toMatchObject({ dkimEvaluated: 'fail', spfEvaluated: 'pass' })
      expect(first(p).dkim).toEqual([
        { domain: 'example.com', selector: null, result: 'fail', humanResult: null },
      ])
    },
  },
  'parsedmarc/aggregate/protection.outlook.com!example.com!1711756800!1711843200.xml': {
    ...{ variant: 'rfc7489', orgName: 'Outlook.com', reportId: 'cfeafefe4129445e8c81018bd9177197' },
    ...{ begin: 1711756800, end: 1711843200, domain: 'example.com', records: 1, messages: 1 },
    check: (p) => {
      expect(first(p)).toMatchObject({ envelopeTo: 'hotmail.com', envelopeFrom: 'example.com' })
      expect(first(p).spf).toEqual([{ domain: 'example.com', scope: 'mfrom', result: 'fail' }])
    },
  },
  'parsedmarc/aggregate/rfc9990-example.net!example.com!1700000000!1700086399.xml': {
    ...{ variant: 'rfc9990', orgName: 'example.net', reportId: 'dmarcbis-test-report-001' },
    ...{ begin: 1700000000, end: 1700086399, domain: 'example.com', records: 2, messages: 7 },
    check: (p) => {
      const policy = { adkim: 's', aspf: 's', p: 'reject', sp: 'quarantine', np: 'reject', pct: null }
      expect(p.metadata!.policy).toMatchObject({ ...policy, testing: 'y', discoveryMethod: 'treewalk' })
      expect(p.records[1]).toMatchObject({ disposition: 'reject', envelopeFrom: 'spoofed.example.com' })
      expect(p.records[1]!.reasons).toEqual([{ type: 'other', comment: 'sender not authorized' }])
    },
  },
  'parsedmarc/aggregate/rfc9990-sample.xml': {
    ...{ variant: 'rfc9990', orgName: 'Sample Reporter', reportId: '3v98abbp8ya9n3va8yr8oa3ya' },
    ...{ begin: 302832000, end: 302918399, domain: 'example.com', records: 1, messages: 123 },
    // The namespace decides, although the sample says <version>1.0</version>.
    check: (p) => {
      expect(p.metadata!.version).toBe('1.0')
      expect(p.metadata!.generator).toBe('Example DMARC Aggregate Reporter v1.2')
      expect(p.metadata!.policy).toMatchObject({ adkim: null, np: 'none', testing: 'n' })
      expect(first(p)).toMatchObject({ disposition: 'pass', sourceIp: '192.0.2.123' })
      expect(first(p).dkim).toEqual([
        { domain: 'example.com', selector: 'abc123', result: 'pass', humanResult: null },
      ])
    },
  },
  'parsedmarc/aggregate/usssa.com!example.com!1538784000!1538870399.xml': {
    ...{ variant: 'rfc7489', orgName: 'usssa.com', reportId: '8953b4d4a4ee4218b6ac0e2cb2667ee1' },
    ...{ begin: 1538784000, end: 1538870399, domain: 'example.com', records: 2, messages: 2 },
    check: (p) => {
      // An empty optional element is null, not ''.
      for (const r of p.records) expect(r).toMatchObject({ envelopeFrom: null, dkim: [], spf: [] })
      expect(p.records.map((r) => r.sourceIp)).toEqual(['12.20.127.40', '199.230.200.36'])
    },
  },
  'parsedmarc/aggregate/veeam.com!example.com!1530133200!1530219600.xml': {
    ...{ variant: 'rfc7489', orgName: 'veeam.com', reportId: 'sonexushealth.com:1530233361' },
    ...{ begin: 1530133200, end: 1530219600, domain: 'example.com', records: 1, messages: 1 },
    check: (p) => {
      expect(p.metadata!.email).toBe('noreply.it.dmarc@veeam.com')
      expect(first(p).spf).toEqual([{ domain: '', scope: null, result: 'none' }])
    },
  },
  'parsedmarc/aggregate_invalid/report_with_upper_cased_pass.xml': {
    ...{ variant: 'rfc7489', orgName: 'example.com', reportId: 'aggr_report_example.com_20191202_1638' },
    ...{ begin: 1574955300, end: 1575304683, domain: 'example.com', records: 1, messages: 1 },
    check: (p) => {
      // Four days: a range over a day is kept as published.
      expect(p.metadata!.end - p.metadata!.begin).toBe(349383)
      expect(first(p)).toMatchObject({ disposition: 'none', dkimEvaluated: 'pass', spfEvaluated: 'pass' })
      expect(first(p).dkim[0]).toMatchObject({
        result: 'pass',
        humanResult: 'verify result: all signatures verified',
      })
      expect(first(p).spf).toEqual([{ domain: 'example.com', scope: null, result: 'pass' }])
    },
  },
  'parsedmarc/empty.xml': { error: 'empty', message: 'the report is empty' },
  'parsedmarc/extract_report/changed-input.xml': {
    ...{ variant: 'rfc9990', orgName: 'fred.com', reportId: '11038226378739404135', begin: 1718236800 },
    ...{ end: 1718323199, domain: 'example.com', records: 20, messages: 3047 },
  },
  'parsedmarc/extract_report/nice-input.xml': {
    ...{ variant: 'rfc9990', orgName: 'google.com', reportId: '11038226378739404135', begin: 1718236800 },
    ...{ end: 1718323199, domain: 'example.com', records: 20, messages: 3047 },
    // Google's <np> alone makes it RFC 9990. Several DKIM results per record.
    check: (p) => {
      expect(p.metadata!.policy.np).toBe('none')
      expect(p.records.reduce((n, r) => n + r.dkim.length, 0)).toBe(34)
      expect(p.records[1]!.dkim.map((d) => d.domain)).toEqual(['example.com', 'amazonses.com'])
      expect(p.records.at(-1)).toMatchObject({ sourceIp: '209.85.220.41', count: 359 })
    },
  },
  'stalwart-mail-auth/001.xml': {
    ...{ variant: 'rfc9990', orgName: 'Sample Reporter', reportId: '3v98abbp8ya9n3va8yr8oa3ya' },
    ...{ begin: 161212415, end: 161221511, domain: 'example.com', records: 1, messages: 123 },
  },
  'stalwart-mail-auth/002.xml': {
    ...{ variant: 'rfc7489', orgName: 'google.com', reportId: '2122885654478337555', begin: 1661558400 },
    ...{ end: 1661644799, domain: 'example.org', records: 1, messages: 2 },
  },
  'stalwart-mail-auth/003.xml': {
    ...{ variant: 'rfc7489', orgName: 'Fastmail Pty Ltd', reportId: '758848224', begin: 1667347200 },
    ...{ end: 1667433599, domain: 'stalw.art', records: 4, messages: 9 },
  },
  'stalwart-mail-auth/004.xml': {
    ...{ variant: 'rfc9990', orgName: 'Sample Reporter', reportId: '3v98abbp8ya9n3va8yr8oa3ya' },
    ...{ begin: 302832000, end: 302918399, domain: 'example.com', records: 1, messages: 123 },
  },
  'stalwart-mail-auth/005.xml': {
    ...{ variant: 'rfc7489', orgName: 'Legacy Reporter', reportId: 'legacy-1', begin: 100, end: 200 },
    ...{ domain: 'example.com', records: 1, messages: 1 },
  },
}

test('every XML sample has an expectation (none is skipped)', () => {
  expect(xmlFixtures()).toEqual(Object.keys(EXPECTED).sort())
})

describe('aggregate report samples', () => {
  for (const [path, expected] of Object.entries(EXPECTED)) {
    test(path, async () => {
      const parsed = await collect(parseAggregateReport([await fixtureBytes(path)]))
      if ('error' in expected) {
        expect(parsed.error).toEqual({ code: expected.error, message: expected.message } as never)
        expect(parsed.metadata).toBeNull()
        return
      }
      expect(parsed.error).toBeNull()
      const m = parsed.metadata!
      const { variant, orgName, reportId, begin, end } = expected
      expect({
        variant: m.variant,
        orgName: m.orgName,
        reportId: m.reportId,
        begin: m.begin,
        end: m.end,
      }).toEqual({
        variant,
        orgName,
        reportId,
        begin,
        end,
      })
      expect(m.policy.domain).toBe(expected.domain)
      expect(parsed.records.length).toBe(expected.records)
      expect(parsed.records.reduce((sum, r) => sum + r.count, 0)).toBe(expected.messages)
      expected.check?.(parsed)
    })
  }
})

test('nice-input and changed-input differ only in org_name', async () => {
  const nice = await collect(
    parseAggregateReport([await fixtureBytes('parsedmarc/extract_report/nice-input.xml')]),
  )
  const changed = await collect(
    parseAggregateReport([await fixtureBytes('parsedmarc/extract_report/changed-input.xml')]),
  )
  expect({ ...changed.metadata, orgName: 'google.com' }).toEqual(nice.metadata!)
  expect(changed.records).toEqual(nice.records)
})

describe('record/identities (issue #17: a 2013 report refused; tests/fixtures/dmarc-aggregate-variants)', () => {
  const VARIANTS = new URL('../../fixtures/dmarc-aggregate-variants/', import.meta.url).pathname

  test('<identities> is read as <identifiers>: the same report as the original sample', async () => {
    const renamed = await collect(
      parseAggregateReport([await Bun.file(`${VARIANTS}identities-old-draft.xml`).bytes()]),
    )
    const original = await collect(
      parseAggregateReport([await fixtureBytes('parsedmarc/aggregate/old_draft_from_wiki.xml')]),
    )
    expect(renamed.error).toBeNull()
    expect(renamed.records).toHaveLength(1)
    expect(renamed.records[0]).toMatchObject({ headerFrom: 'example.com', count: 2 })
    expect(renamed.metadata).toEqual(original.metadata!)
    expect(renamed.records).toEqual(original.records)
  })

  test('envelope_from and envelope_to are read inside <identities> too', async () => {
    const xml = (await Bun.file(`${VARIANTS}identities-old-draft.xml`).text()).replace(
      '<header_from>example.com</header_from>',
      '<envelope_to>Example.NET</envelope_to><envelope_from>bounce.example.com</envelope_from><header_from>example.com</header_from>',
    )
    const parsed = await collect(parseAggregateReport([xml]))
    expect(parsed.error).toBeNull()
    expect(parsed.records[0]).toMatchObject({ envelopeTo: 'example.net', envelopeFrom: 'bounce.example.com' })
  })
})
