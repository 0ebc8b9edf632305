import { describe, expect, test } from 'bun:test'
import { MAX_REPORT_TIME } from '../../../domain/reports/aggregate/report-fields.ts'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { reportDay } from '../../../domain/reports/store-aggregate.ts'
import { asAsync, collect, pieces, report, utf8 } from './aggregate-support.ts'

// Values reports get wrong, as docs/decisions-aggregate-parser.md decides them: times in
// milliseconds and reversed ranges, IPv4-mapped source addresses, UTF-16 without a byte order mark.

const parse = (input: string | Uint8Array) => collect(parseAggregateReport([input]))

const dated = (begin: string, end: string) =>
  report({
    metadata: `<report_metadata><org_name>x</org_name><report_id>r</report_id>
    <date_range><begin>${begin}</begin><end>${end}</end></date_range></report_metadata>
    <policy_published><domain>example.com</domain></policy_published>`,
  })

describe('date_range: Unix seconds that give a real date (RFC 7489 Appendix C)', () => {
  test('times in milliseconds are refused with invalid_value, not handed to the store', async () => {
    const begin = await parse(dated('1709683200000', '1709769599000'))
    expect(begin.error).toEqual({
      code: 'invalid_value',
      message:
        'report_metadata/date_range/begin 1709683200000 is after 2100-01-01 (milliseconds instead of seconds?)',
    })
    expect(begin.metadata).toBeNull()
    expect(begin.records).toEqual([])
    // The largest value the digit check lets through: past what a JavaScript Date can hold.
    const end = await parse(dated('1709683200', '999999999999999'))
    expect(end.error).toMatchObject({
      code: 'invalid_value',
      message: expect.stringContaining('report_metadata/date_range/end 999999999999999 is after'),
    })
  })

  test('the bounds: the epoch and 2100-01-01T00:00:00Z are accepted, a second later is not', async () => {
    expect(new Date(MAX_REPORT_TIME * 1000).toISOString()).toBe('2100-01-01T00:00:00.000Z')
    const widest = await parse(dated('0', String(MAX_REPORT_TIME)))
    expect(widest.error).toBeNull()
    expect(widest.metadata).toMatchObject({ begin: 0, end: MAX_REPORT_TIME })
    expect(reportDay(widest.metadata!.end)).toBe('2100-01-01')
    const past = await parse(dated('1709683200', String(MAX_REPORT_TIME + 1)))
    expect(past.error?.code).toBe('invalid_value')
  })

  test('a range that ends before it begins is refused; an empty one (end = begin) is kept', async () => {
    const reversed = await parse(dated('1709683200', '1709683100'))
    expect(reversed.error).toEqual({
      code: 'invalid_value',
      message: 'report_metadata/date_range/end 1709683100 is before begin 1709683200',
    })
    const instant = await parse(dated('1709683200', '1709683200'))
    expect(instant.error).toBeNull()
    expect(instant.metadata).toMatchObject({ begin: 1709683200, end: 1709683200 })
  })
})

describe('source_ip', () => {
  test('an IPv4-mapped IPv6 address is the IPv4 sender (RFC 4291 §2.5.5.2), one source with it', async () => {
    const record = /<record>.*<\/record>/s.exec(report())![0]
    const xml = report().replace(
      record,
      [' ::ffff:192.0.2.1 ', '::FFFF:C000:0201', '192.0.2.1', '::ffff:0:c000:201', '::192.0.2.1']
        .map((ip) => record.replace('192.0.2.1', ip))
        .join(''),
    )
    const { records, error } = await parse(xml)
    expect(error).toBeNull()
    // ::ffff:0:0/96 only: the SIIT (::ffff:0:a.b.c.d) and deprecated compatible forms stay IPv6.
    expect(records.map((r) => r.sourceIp)).toEqual([
      '192.0.2.1',
      '192.0.2.1',
      '192.0.2.1',
      '::ffff:0:c000:201',
      '::c000:201',
    ])
  })
})

describe('UTF-16 without a byte order mark (XML 1.0 Appendix F)', () => {
  const utf16 = (text: string, bigEndian: boolean) => {
    const bytes = new Uint8Array(text.length * 2)
    const view = new DataView(bytes.buffer)
    for (let i = 0; i < text.length; i++) view.setUint16(i * 2, text.charCodeAt(i), !bigEndian)
    return bytes
  }
  const xml = `<?xml version="1.0" encoding="UTF-16"?>${report().replace('Example', '\u65e5\u672c')}`

  test.each([
    ['little-endian', false],
    ['big-endian', true],
  ])('%s is decoded, also when it arrives a byte at a time', async (_, bigEndian) => {
    const bytes = utf16(xml, bigEndian)
    for (const chunks of [[bytes], [...pieces(bytes, () => 1)]]) {
      const { metadata, records, error } = await collect(parseAggregateReport(asAsync(chunks)))
      expect(error).toBeNull()
      expect(metadata!.orgName).toBe('\u65e5\u672c')
      expect(records.map((r) => r.sourceIp)).toEqual(['192.0.2.1'])
    }
  })

  test('without the declaration too; UTF-8 starting with "<" is read as before', async () => {
    expect((await parse(utf16(report(), false))).metadata!.orgName).toBe('Example')
    expect((await parse(utf8(report()))).metadata!.orgName).toBe('Example')
  })
})
