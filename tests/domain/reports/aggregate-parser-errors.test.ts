import { describe, expect, test } from 'bun:test'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { asAsync, collect, report, utf8 } from './aggregate-support.ts'

// What the parser refuses (each with its stable code and a message naming the field), what it
// recovers, and how it reads bytes in other encodings.

const parse = (input: string | Uint8Array) => collect(parseAggregateReport([input]))

const META = (inner: string) =>
  `<report_metadata>${inner}</report_metadata><policy_published><domain>example.com</domain></policy_published>`
const DATES = '<date_range><begin>1</begin><end>2</end></date_range>'

describe('refused reports', () => {
  const cases: [string, string, { code: string; message: string }][] = [
    ['empty input', '', { code: 'empty', message: 'the report is empty' }],
    ['white space and a BOM only', '\uFEFF \r\n\t', { code: 'empty', message: 'the report is empty' }],
    ['plain text', 'hello, this is not a report', { code: 'not_xml', message: 'no XML element found' }],
    [
      'JSON (a TLS report sent here)',
      '{"organization-name":"x"}',
      { code: 'not_xml', message: 'no XML element found' },
    ],
    [
      'another XML document',
      '<html><body>502 Bad Gateway</body></html>',
      { code: 'not_aggregate_report', message: 'no <feedback> element (the root element is <html>)' },
    ],
    [
      'a truncated report',
      report().replace('</feedback>', ''),
      { code: 'not_xml', message: 'the input ends before </feedback>' },
    ],
    [
      'a report cut inside a tag',
      report().slice(0, -5),
      { code: 'not_xml', message: 'the input ends inside markup' },
    ],
    [
      'a mismatched end tag',
      '<feedback><report_metadata></feedback>',
      { code: 'not_xml', message: 'end tag </feedback> where </report_metadata> was expected' },
    ],
    [
      'no report_metadata',
      '<feedback><policy_published><domain>a.example</domain></policy_published></feedback>',
      { code: 'missing_field', message: 'report_metadata is missing' },
    ],
    [
      'no policy_published',
      `<feedback><report_metadata><org_name>x</org_name><report_id>r</report_id>${DATES}</report_metadata></feedback>`,
      { code: 'missing_field', message: 'policy_published is missing' },
    ],
    [
      'no report_id',
      report({ metadata: META(`<org_name>x</org_name>${DATES}`) }),
      { code: 'missing_field', message: 'report_metadata/report_id is missing' },
    ],
    [
      'an empty report_id',
      report({ metadata: META(`<org_name>x</org_name><report_id> &lt;&gt; </report_id>${DATES}`) }),
      { code: 'missing_field', message: 'report_metadata/report_id is missing' },
    ],
    [
      'no date_range/end',
      report({
        metadata: META(
          '<org_name>x</org_name><report_id>r</report_id><date_range><begin>1</begin></date_range>',
        ),
      }),
      { code: 'missing_field', message: 'report_metadata/date_range/end is missing' },
    ],
    [
      'a begin that is not a Unix time',
      report({
        metadata: META(
          '<org_name>x</org_name><report_id>r</report_id><date_range><begin>2024-01-01</begin><end>2</end></date_range>',
        ),
      }),
      { code: 'invalid_value', message: 'report_metadata/date_range/begin "2024-01-01" is not a Unix time' },
    ],
    [
      'a count that is not a number',
      report().replace('<count>3</count>', '<count>three</count>'),
      {
        code: 'invalid_value',
        message: 'record 1: row/count "three" is not an integer from 0 to 2147483647',
      },
    ],
    [
      'a negative count',
      report().replace('<count>3</count>', '<count>-1</count>'),
      { code: 'invalid_value', message: 'record 1: row/count "-1" is not an integer from 0 to 2147483647' },
    ],
    [
      'a count past what one row can stand for (the stored column is a 32-bit integer)',
      report().replace('<count>3</count>', '<count>2147483648</count>'),
      {
        code: 'invalid_value',
        message: 'record 1: row/count "2147483648" is not an integer from 0 to 2147483647',
      },
    ],
    [
      'a source IP that is not an IP address',
      report().replace('192.0.2.1', 'unknown'),
      { code: 'invalid_value', message: 'record 1: row/source_ip "unknown" is not an IP address' },
    ],
    [
      'a record without count',
      report().replace('<count>3</count>', ''),
      { code: 'missing_field', message: 'record 1: row/count is missing' },
    ],
    [
      'a record without header_from',
      report().replace('<header_from>example.com</header_from>', ''),
      { code: 'missing_field', message: 'record 1: identifiers/header_from is missing' },
    ],
  ]
  for (const [name, input, error] of cases) {
    test(name, async () => {
      const parsed = await parse(input)
      expect(parsed.error).toEqual(error as never)
      expect(parsed.events.at(-1)).toEqual({ type: 'error', error } as never)
    })
  }
})

describe('the first real defect is named (issue #17)', () => {
  const BROKEN_RECORD = `<record><row><source_ip>192.0.2.1</source_ip><count>1</count>
    <policy_evaluated><disposition>none</disposition></policy_evaluated></row>
    <identifiers></identifiers><auth_results/></record>`
  const POLICY = '<policy_published><domain>example.com</domain></policy_published>'
  const METADATA = `<report_metadata><org_name>x</org_name><report_id>r</report_id>${DATES}</report_metadata>`

  test('records with defects but no report_metadata: the missing metadata is the reason', async () => {
    const parsed = await parse(`<feedback>${POLICY}${BROKEN_RECORD}</feedback>`)
    expect(parsed.error).toEqual({ code: 'missing_field', message: 'report_metadata is missing' })
  })
  test('records with defects but no policy_published: the missing policy is the reason', async () => {
    const parsed = await parse(`<feedback>${METADATA}${BROKEN_RECORD}</feedback>`)
    expect(parsed.error).toEqual({ code: 'missing_field', message: 'policy_published is missing' })
  })
  test('neither: report_metadata first, as the schema orders them', async () => {
    const parsed = await parse(`<feedback>${BROKEN_RECORD}${BROKEN_RECORD}</feedback>`)
    expect(parsed.error).toEqual({ code: 'missing_field', message: 'report_metadata is missing' })
  })
  test('a broken report_metadata after a broken record: the metadata is named', async () => {
    const metadata = `<report_metadata><org_name>x</org_name>${DATES}</report_metadata>`
    const parsed = await parse(`<feedback>${BROKEN_RECORD}${metadata}${POLICY}</feedback>`)
    expect(parsed.error).toEqual({ code: 'missing_field', message: 'report_metadata/report_id is missing' })
  })
  test('a broken record before complete metadata is still refused once the metadata is there', async () => {
    const parsed = await parse(`<feedback>${BROKEN_RECORD}${METADATA}${POLICY}</feedback>`)
    expect(parsed.error).toEqual({
      code: 'missing_field',
      message: 'record 1: identifiers/header_from is missing',
    })
    expect(parsed.metadata).toBeNull()
    expect(parsed.records).toEqual([])
  })
  test('other defects of an early record (a bad count) wait the same way', async () => {
    const record = BROKEN_RECORD.replace('<count>1</count>', '<count>x</count>')
    const parsed = await parse(`<feedback>${POLICY}${record}</feedback>`)
    expect(parsed.error).toEqual({ code: 'missing_field', message: 'report_metadata is missing' })
  })
})

describe('tolerated and recovered', () => {
  test('an auth result without its result or domain is kept with an empty value, not refused', async () => {
    // parsedmarc reads such reports (it skips a domainless result, a missing result is "none"):
    // one incomplete result does not cost the report's other records (issue #17).
    const noResult = await parse(report().replace('<result>pass</result></dkim>', '</dkim>'))
    expect(noResult.error).toBeNull()
    expect(noResult.records[0]!.dkim).toEqual([
      { domain: 'example.com', selector: null, result: '', humanResult: null },
    ])
    const noDomain = await parse(report().replace('<spf><domain>example.com</domain>', '<spf>'))
    expect(noDomain.error).toBeNull()
    expect(noDomain.records[0]!.spf).toEqual([{ domain: '', scope: null, result: 'fail' }])
  })

  test('source IPs are kept in canonical form (RFC 5952), so one address is one source', async () => {
    const { records, error } = await parse(report().replace('192.0.2.1', ' 2001:DB8:0:0:0:0:0:1 '))
    expect(error).toBeNull()
    expect(records.map((r) => r.sourceIp)).toEqual(['2001:db8::1'])
  })
  test('a count of 0, and counts with white space around them', async () => {
    const { records } = await parse(report().replace('<count>3</count>', '<count>\n 0 \t</count>'))
    expect(records[0]!.count).toBe(0)
  })

  test('a count written with character references or CDATA is read as its digits', async () => {
    for (const [written, count] of [
      ['&#55;', 7],
      [' &#x31;&#50; ', 12],
      ['<![CDATA[7]]>', 7],
    ] as const) {
      const { records, error } = await parse(
        report().replace('<count>3</count>', `<count>${written}</count>`),
      )
      expect(error).toBeNull()
      expect(records[0]!.count).toBe(count)
    }
    const { error } = await parse(report().replace('<count>3</count>', '<count>&#55;x</count>'))
    expect(error?.code).toBe('invalid_value')
  })

  test('a report id wrapped in <...> (escaped or as CDATA) is unwrapped', async () => {
    for (const id of ['&lt;abc@example.com&gt;', '<![CDATA[<abc@example.com>]]>', ' <abc@example.com> ']) {
      const { metadata } = await parse(
        report({ metadata: META(`<org_name>x</org_name><report_id>${id}</report_id>${DATES}`) }),
      )
      expect(metadata!.reportId).toBe('abc@example.com')
    }
  })

  test('times with a fraction (NetEase writes 1337270400.0) are read as whole seconds', async () => {
    const dates = (begin: string, end: string) =>
      report({
        metadata: META(
          `<org_name>163.com</org_name><report_id>r</report_id><date_range><begin>${begin}</begin><end>${end}</end></date_range>`,
        ),
      })
    const { metadata } = await parse(dates('1337270400.0', '1337356799.0'))
    expect(metadata).toMatchObject({ begin: 1337270400, end: 1337356799 })
    // Two fractions of one second are one time, not a range that ends before it begins.
    expect((await parse(dates('100.9', '100.1'))).metadata).toMatchObject({ begin: 100, end: 100 })
    for (const bad of ['1.2.3', '1.', '.5', '1e9', '1,5']) {
      const { error } = await parse(dates(bad, '2000000000'))
      expect(error).toEqual({
        code: 'invalid_value',
        message: `report_metadata/date_range/begin ${JSON.stringify(bad)} is not a Unix time`,
      })
    }
  })

  test('metadata in any order (estadocuenta sample: report_id before org_name)', async () => {
    const xml = report({
      metadata: `<policy_published><domain>example.com</domain></policy_published>
      <report_metadata>${DATES}<report_id>r9</report_id><org_name>Late</org_name></report_metadata>`,
    })
    const { metadata, records } = await parse(xml)
    expect(metadata).toMatchObject({ orgName: 'Late', reportId: 'r9', begin: 1, end: 2 })
    expect(records).toHaveLength(1)
  })

  test('records before the metadata are held back until it arrives', async () => {
    const xml = report()
    const record = /<record>.*<\/record>/s.exec(xml)![0]
    const early = `<feedback>${record}${record}${xml.slice('<feedback>'.length).replace(record, '')}`
    const { events } = await parse(early)
    expect(events.map((e) => e.type)).toEqual(['metadata', 'record', 'record'])
  })

  test('more than 1,000 records before the metadata are refused', async () => {
    const record = /<record>.*<\/record>/s.exec(report())![0]
    const { error, records } = await parse(`<feedback>${record.repeat(1001)}</feedback>`)
    expect(records).toEqual([])
    expect(error).toEqual({
      code: 'limit_exceeded',
      message: 'more than 1000 records come before report_metadata and policy_published',
    })
  })

  test('unknown and upper-case values are kept, lower-cased, never dropped', async () => {
    const xml = report()
      .replace('<disposition>none</disposition>', '<disposition>Quarantined</disposition>')
      .replace('<result>pass</result></dkim>', '<result>UNUSED</result></dkim>')
      .replace('<result>fail</result></spf>', '<result>HardFail</result></spf>')
    const { records } = await parse(xml)
    expect(records[0]).toMatchObject({ disposition: 'quarantined' })
    expect(records[0]!.dkim[0]!.result).toBe('unused')
    expect(records[0]!.spf[0]!.result).toBe('hardfail')
  })

  test('prefixed element names are read by local name', async () => {
    const xml = report()
      .replace(/<(\/?)([a-z_]+)>/g, '<$1d:$2>')
      .replace('<d:feedback>', '<d:feedback xmlns:d="urn:ietf:params:xml:ns:dmarc-2.0">')
    const { metadata, records } = await parse(xml)
    expect(metadata).toMatchObject({ variant: 'rfc9990', orgName: 'Example' })
    expect(records[0]!.count).toBe(3)
  })
})

describe('bytes and encodings', () => {
  const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))
  const named = (org: string) =>
    report({ metadata: META(`<org_name>${org}</org_name><report_id>r</report_id>${DATES}`) })

  test('a declaration naming ISO-8859-1 is honoured', async () => {
    const bytes = latin1(
      `<?xml version="1.0" encoding="ISO-8859-1"?>${named('Soci\u00e9t\u00e9 G\u00e9n\u00e9rale')}`,
    )
    expect((await parse(bytes)).metadata!.orgName).toBe('Soci\u00e9t\u00e9 G\u00e9n\u00e9rale')
  })

  test('Windows-1252 bytes in a UTF-8 report become U+FFFD, not an error', async () => {
    const bytes = latin1(`<?xml version="1.0" encoding="UTF-8"?>${named('It\u0092s')}`)
    expect((await parse(bytes)).metadata!.orgName).toBe('It\uFFFDs')
  })

  test('an unknown or impossible encoding label falls back to UTF-8', async () => {
    for (const label of ['x-no-such-charset', 'UTF-16']) {
      const bytes = utf8(`<?xml version="1.0" encoding="${label}"?>${named('\u00c5land')}`)
      expect((await parse(bytes)).metadata!.orgName).toBe('\u00c5land')
    }
  })

  test('a UTF-8 BOM is dropped, and UTF-16 with a BOM is decoded', async () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(named('\u00d8rsted'))])
    expect((await parse(withBom)).metadata!.orgName).toBe('\u00d8rsted')
    const text = `\uFEFF<?xml version="1.0" encoding="UTF-16"?>${named('\u65e5\u672c')}`
    const utf16 = new Uint8Array(new Uint16Array(Array.from(text, (c) => c.charCodeAt(0))).buffer)
    const { metadata, error } = await collect(
      parseAggregateReport(asAsync([utf16.slice(0, 3), utf16.slice(3)])),
    )
    expect(error).toBeNull()
    expect(metadata!.orgName).toBe('\u65e5\u672c')
  })
})
