import { describe, expect, test } from 'bun:test'
import { createSaxesTokenizer } from '../../../domain/reports/aggregate/saxes-tokenizer.ts'
import { parseAggregateReport, parseAggregateReportWith } from '../../../domain/reports/aggregate-parser.ts'
import {
  asAsync,
  collect,
  fixtureBytes,
  pieces,
  report,
  seeded,
  utf8,
  xmlFixtures,
} from './aggregate-support.ts'

// Chunk boundaries can fall anywhere: inside a tag, an entity, a CDATA terminator or a multi-byte
// UTF-8 sequence. Every way of cutting the input must give exactly the events of the whole buffer.
// And saxes, a conformant XML parser driving the same report builder, is the reference.

// Everything the tokenizer handles, in one report: declaration with encoding, comments and PIs in
// and between elements, namespace prefixes, attributes holding `>` and `/`, CDATA, the five
// entities and character references, CRLF, and 2-, 3- and 4-byte UTF-8 characters.
const FEATURES = report({
  head: '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\r\n<!-- a comment with <tags> -->\r\n<?pi data?>\r\n',
  attributes: ' xmlns:dmarc="http://dmarc.org/dmarc-xml/0.1"',
  metadata: `<report_metadata><org_name>Caf\u00e9 &amp; Co &lt;\u65e5\u672c&gt; \u{1F600} &#x41;&#66;</org_name>
  <report_id><![CDATA[<id-1>]]></report_id><email>a@b.example<!-- split -->.org</email>
  <extra_contact_info>line 1\r\nline 2</extra_contact_info>
  <date_range><begin>1</begin><end>2</end></date_range></report_metadata>
  <dmarc:policy_published a='x>y' b="/>">
  <dmarc:domain>Example.COM</dmarc:domain><p/><pct>  50 </pct></dmarc:policy_published>`,
  record: `<record><row><source_ip>2001:db8::1</source_ip><count>7</count><policy_evaluated>
  <disposition>QUARANTINE</disposition><dkim>Pass</dkim><spf>hardfail</spf>
  <reason><type>local_policy</type><comment>a &quot;quoted&quot; comment &apos;here&apos;</comment></reason>
  </policy_evaluated></row><identifiers><header_from>example.com</header_from></identifiers>
  <auth_results><dkim><domain>example.com</domain><selector>s1</selector><result>unused</result></dkim>
  <dkim><domain>\u00fcber.example</domain><result>PASS</result></dkim>
  <spf><domain>example.com</domain><scope>MFROM</scope><result>pass</result></spf></auth_results></record>`,
})

describe('the feature sample', () => {
  test('parses to the values an XML reader sees', async () => {
    const { metadata, records, error } = await collect(parseAggregateReport([utf8(FEATURES)]))
    expect(error).toBeNull()
    expect(metadata).toMatchObject({
      orgName: 'Caf\u00e9 & Co <\u65e5\u672c> \u{1F600} AB',
      reportId: 'id-1',
      email: 'a@b.example.org',
      extraContactInfo: 'line 1\nline 2',
      // <feedback> itself has no prefix, so it is in no namespace whatever its children use
      // (tests/domain/reports/aggregate-namespace.test.ts).
      variant: 'rfc7489',
    })
    expect(metadata!.policy).toMatchObject({ domain: 'example.com', p: null, pct: 50 })
    expect(records).toEqual([
      {
        sourceIp: '2001:db8::1',
        count: 7,
        disposition: 'quarantine',
        dkimEvaluated: 'pass',
        spfEvaluated: 'hardfail',
        reasons: [{ type: 'local_policy', comment: `a "quoted" comment 'here'` }],
        headerFrom: 'example.com',
        envelopeFrom: null,
        envelopeTo: null,
        dkim: [
          { domain: 'example.com', selector: 's1', result: 'unused', humanResult: null },
          { domain: '\u00fcber.example', selector: null, result: 'pass', humanResult: null },
        ],
        spf: [{ domain: 'example.com', scope: 'mfrom', result: 'pass' }],
      },
    ])
  })

  test('gives the same events through saxes', async () => {
    const ours = await collect(parseAggregateReport([utf8(FEATURES)]))
    const saxes = await collect(parseAggregateReportWith(createSaxesTokenizer, [utf8(FEATURES)]))
    expect(saxes.events).toEqual(ours.events)
  })
})

const inputs = async () => [
  ...xmlFixtures().map((path) => ({ path, bytes: fixtureBytes(path) })),
  { path: 'the feature sample', bytes: Promise.resolve(utf8(FEATURES)) },
]

describe('chunk boundaries anywhere give the events of the whole buffer', async () => {
  for (const { path, bytes: loading } of await inputs()) {
    test(path, async () => {
      const bytes = await loading
      const whole = await collect(parseAggregateReport([bytes]))
      const cuts: [string, Iterable<Uint8Array | string>][] = [
        ['1-byte', pieces(bytes, () => 1)],
        ['7-byte', pieces(bytes, () => 7)],
        ...[1, 2, 3].map((seed): [string, Iterable<Uint8Array>] => {
          const random = seeded(seed)
          return [`random sizes (seed ${seed})`, pieces(bytes, () => 1 + random(300))]
        }),
      ]
      for (const [how, chunks] of cuts) {
        const parsed = await collect(parseAggregateReport(asAsync(chunks)))
        expect({ how, events: parsed.events }).toEqual({ how, events: whole.events })
      }
      // Already-decoded text in pieces takes the same path without the byte decoder.
      const text = new TextDecoder().decode(bytes)
      const random = seeded(9)
      const strings: string[] = []
      for (let at = 0; at < text.length; ) {
        const size = 1 + random(40)
        strings.push(text.slice(at, at + size))
        at += size
      }
      expect((await collect(parseAggregateReport(strings))).events).toEqual(whole.events)
    })
  }
})

describe('saxes (the reference) agrees on every sample', async () => {
  for (const path of xmlFixtures()) {
    test(path, async () => {
      const bytes = await fixtureBytes(path)
      const ours = await collect(parseAggregateReport(pieces(bytes, () => 4096)))
      const saxes = await collect(
        parseAggregateReportWith(
          createSaxesTokenizer,
          pieces(bytes, () => 4096),
        ),
      )
      if (path.endsWith('invalid_xml.xml')) {
        // The one deliberate difference: saxes rejects `<bad-xml@bad-xml.net>`, we read it as text.
        expect(saxes.error?.code).toBe('not_xml')
        expect(saxes.metadata).toBeNull()
        expect(ours.error).toBeNull()
        expect(ours.records.length).toBe(1)
      } else {
        expect(saxes.events).toEqual(ours.events)
      }
    })
  }
})
