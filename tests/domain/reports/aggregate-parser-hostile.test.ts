import { heapStats } from 'bun:jsc'
import { describe, expect, test } from 'bun:test'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { DEFAULT_XML_LIMITS } from '../../../domain/reports/aggregate-types.ts'
import { collect, fixtureBytes, pieces, report, seeded, utf8, xmlFixtures } from './aggregate-support.ts'

// Hostile input ends in a precise error, quickly and without buffering: no DTD, no entity
// expansion, and caps on depth, element count and text (XmlLimits).

/** A source that makes its text on demand and counts what the parser pulled. */
function generated(parts: () => Generator<string>) {
  const source = { pulled: 0, chunks: (async function* () {})() as AsyncGenerator<Uint8Array> }
  source.chunks = (async function* () {
    for (const part of parts()) {
      source.pulled += part.length
      yield utf8(part)
    }
  })()
  return source
}

const BLOCK = 'A'.repeat(64 * 1024)

describe('no DTD, no entity expansion', () => {
  test('a DOCTYPE with an entity bomb is refused before anything is expanded', async () => {
    const laughs = Array.from({ length: 10 }, (_, i) =>
      i === 0 ? '<!ENTITY lol0 "lol">' : `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`,
    ).join('')
    const bomb = `<?xml version="1.0"?><!DOCTYPE feedback [${laughs}]>${report({ metadata: '<org_name>&lol9;</org_name>' })}`
    const started = performance.now()
    const { events, error } = await collect(parseAggregateReport([utf8(bomb)]))
    expect(events).toHaveLength(1)
    expect(error).toEqual({
      code: 'not_xml',
      message: 'DOCTYPE declarations are refused (no DTD, no entity expansion)',
    })
    expect(performance.now() - started).toBeLessThan(200)
  })

  test('an external entity (XXE) is refused the same way', async () => {
    const xxe = `<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${report()}`
    expect((await collect(parseAggregateReport([xxe]))).error?.code).toBe('not_xml')
  })

  test('an undeclared entity is kept as written, never expanded', async () => {
    const xml = report({
      metadata: `<report_metadata><org_name>&xxe; AT&T &#0; &#x110000;</org_name><report_id>r</report_id>
      <date_range><begin>1</begin><end>2</end></date_range></report_metadata>
      <policy_published><domain>example.com</domain></policy_published>`,
    })
    const { metadata } = await collect(parseAggregateReport([xml]))
    // Character references to non-characters become U+FFFD, like invalid UTF-8.
    expect(metadata!.orgName).toBe('&xxe; AT&T \uFFFD \uFFFD')
  })
})

describe('limits', () => {
  test('10,000 nested elements stop at the depth cap', async () => {
    const deep = `${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}`
    const { error } = await collect(parseAggregateReport([deep]))
    expect(error).toEqual({ code: 'limit_exceeded', message: 'elements nested deeper than 32' })
  })

  test('a 100 MB text node, streamed, fails fast without being buffered', async () => {
    const source = generated(function* () {
      yield '<feedback><report_metadata><org_name>'
      for (let sent = 0; sent < 100 * 1024 * 1024; sent += BLOCK.length) yield BLOCK
      yield '</org_name></report_metadata></feedback>'
    })
    const started = performance.now()
    const { error } = await collect(parseAggregateReport(source.chunks))
    expect(error).toEqual({ code: 'limit_exceeded', message: 'element text is longer than 65536 characters' })
    // Two blocks are enough to pass the cap: the rest of the 100 MB is never pulled.
    expect(source.pulled).toBeLessThan(3 * BLOCK.length)
    expect(performance.now() - started).toBeLessThan(500)
  })

  test('100 MB of text between elements (mixed content) is capped too', async () => {
    const source = generated(function* () {
      yield `<feedback><version>1.0</version>`
      for (let sent = 0; sent < 100 * 1024 * 1024; sent += BLOCK.length) yield BLOCK
    })
    const { error } = await collect(parseAggregateReport(source.chunks))
    expect(error).toEqual({ code: 'limit_exceeded', message: 'text is longer than 65536 characters' })
    expect(source.pulled).toBeLessThan(3 * BLOCK.length)
  })

  test('a comment or attribute that never ends is capped as markup', async () => {
    for (const opening of ['<feedback><!-- ', '<feedback a="']) {
      const source = generated(function* () {
        yield opening
        for (let sent = 0; sent < 10 * 1024 * 1024; sent += BLOCK.length) yield BLOCK
      })
      const { error } = await collect(parseAggregateReport(source.chunks))
      expect(error).toEqual({ code: 'limit_exceeded', message: 'markup is longer than 65536 characters' })
      expect(source.pulled).toBeLessThan(3 * BLOCK.length)
    }
  })

  test('the element count cap covers the whole document', async () => {
    const records = report().replace(/<record>.*<\/record>/s, (r) => r.repeat(10))
    const limits = { ...DEFAULT_XML_LIMITS, maxElements: 100 }
    const { records: read, error } = await collect(parseAggregateReport([records], limits))
    expect(error).toEqual({ code: 'limit_exceeded', message: 'more than 100 elements' })
    // Records completed before the cap were emitted; the report as a whole is refused.
    expect(read.length).toBeGreaterThan(0)
    expect(read.length).toBeLessThan(10)
  })

  test('the text cap applies to one element, as configured', async () => {
    const limits = { ...DEFAULT_XML_LIMITS, maxTextLength: 10 }
    const long = report({ record: '<record><row><source_ip>2001:db8:0:0:0:0:0:1</source_ip></row></record>' })
    expect((await collect(parseAggregateReport([long], limits))).error?.code).toBe('limit_exceeded')
  })

  test('repeated auth results are capped per record', async () => {
    const dkim = '<dkim><domain>example.com</domain><result>pass</result></dkim>'.repeat(101)
    const xml = report().replace('<auth_results>', `<auth_results>${dkim}`)
    const { error } = await collect(parseAggregateReport([xml]))
    expect(error).toEqual({
      code: 'limit_exceeded',
      message: 'record 1: more than 100 auth_results/dkim elements',
    })
  })
})

describe('memory', () => {
  test('values kept from every record do not keep the report text alive', async () => {
    // 100,000 records (~30 MB of text) in 300 KB chunks; the consumer keeps each source IP.
    const record = /<record>.*<\/record>/s.exec(report())![0]
    const [head, tail] = report().split(record) as [string, string]
    const source = generated(function* () {
      yield head
      for (let block = 0; block < 100; block++) {
        yield Array.from({ length: 1000 }, (_, i) =>
          record.replace('192.0.2.1', `10.${block}.${i >> 8}.${i & 255}`),
        ).join('')
      }
      yield tail
    })
    // Strings' characters live outside the JS heap (bun:jsc counts them as extra memory), which
    // heapUsed alone does not see (tests/domain/reports/xml-text.test.ts checks the copy itself).
    const held = () => {
      Bun.gc(true)
      const stats = heapStats()
      return stats.heapSize + stats.extraMemorySize
    }
    const before = held()
    const kept: string[] = []
    for await (const event of parseAggregateReport(source.chunks)) {
      if (event.type === 'record') kept.push(event.record.sourceIp)
    }
    const after = held()
    expect(kept.length).toBe(100_000)
    expect(new Set(kept).size).toBe(100_000)
    // 100,000 short strings take a few MB; sharing storage with the chunks would hold all ~30 MB.
    expect(after - before).toBeLessThan(15 * 1024 * 1024)
  })
})

describe('bad input never throws', () => {
  test('damaged samples (flipped bytes, cuts) always end in events, an error only last', async () => {
    const random = seeded(7)
    const samples = await Promise.all(xmlFixtures().map(fixtureBytes))
    const codes = new Set<string>()
    for (let i = 0; i < 400; i++) {
      const bytes = samples[random(samples.length)]!.slice()
      if (bytes.length === 0) continue
      for (let flips = 1 + random(5); flips > 0; flips--) {
        bytes[random(bytes.length)] = [0x3c, 0x3e, 0x26, 0x2f, 0x00, 0xff, 0x91, 0x21][random(8)]!
      }
      const cut = random(3) === 0 ? bytes.subarray(0, random(bytes.length)) : bytes
      const parsed = await collect(parseAggregateReport(pieces(cut, () => 1 + random(64))))
      expect(parsed.events.length).toBeGreaterThan(0)
      if (parsed.error !== null) codes.add(parsed.error.code)
    }
    // The damage must have been noticed, not only survived.
    expect(codes.has('not_xml')).toBe(true)
  })

  test('an error from the chunk source itself is not bad input: it propagates', async () => {
    const failing = (async function* () {
      yield utf8('<feedback>')
      throw new Error('connection reset')
    })()
    await expect(collect(parseAggregateReport(failing))).rejects.toThrow('connection reset')
  })

  test('a raw NUL in any value reads as U+FFFD (XML 1.0 §2.2; PostgreSQL text refuses NUL)', async () => {
    const xml = report()
      .replace('<org_name>Example</org_name>', '<org_name>Ex\u0000ample</org_name>')
      .replace('<report_id>r1</report_id>', '<report_id>r\u00001</report_id>')
      .replace('example.com</header_from>', 'exa\u0000mple.com</header_from>')
    // Split inside the value too, so the replacement does not depend on where a chunk ends.
    const bytes = utf8(xml)
    const cut = xml.indexOf('exa\u0000mple') + 3
    const { events, records, error } = await collect(
      parseAggregateReport([bytes.subarray(0, cut), bytes.subarray(cut)]),
    )
    expect(error).toBeNull()
    expect(JSON.stringify(events)).not.toContain('\\u0000')
    const metadata = events.find((e) => e.type === 'metadata') as {
      metadata: { orgName: string; reportId: string }
    }
    expect([metadata.metadata.orgName, metadata.metadata.reportId]).toEqual(['Ex\uFFFDample', 'r\uFFFD1'])
    expect(records[0]!.headerFrom).toBe('exa\uFFFDmple.com')
  })

  // Found by a hostile-input sweep: other control characters were stored as they came.
  test('raw and referenced control characters read as U+FFFD; TAB and LF inside a value stay', async () => {
    const xml = report()
      .replace('<org_name>Example</org_name>', '<org_name>Ev\u0001il\u007f&#1;&#x1F;&#127;</org_name>')
      .replace('<report_id>r1</report_id>', '<report_id>r\u001b1</report_id>')
      .replace('<report_id>', '<extra_contact_info>line one\n\tline two</extra_contact_info><report_id>')
    const { events, error } = await collect(parseAggregateReport([utf8(xml)]))
    expect(error).toBeNull()
    const metadata = events.find((e) => e.type === 'metadata') as {
      metadata: { orgName: string; reportId: string; extraContactInfo?: string | null }
    }
    expect(metadata.metadata.orgName).toBe('Ev\uFFFDil\uFFFD\uFFFD\uFFFD\uFFFD')
    expect(metadata.metadata.reportId).toBe('r\uFFFD1')
    expect(metadata.metadata.extraContactInfo).toBe('line one\n\tline two')
    expect(JSON.stringify(events)).not.toMatch(/\\u00[01]|\u007f/)
  })

  test('nothing after </feedback> is read', async () => {
    let pulledAfter = false
    const source = (async function* () {
      yield utf8(report())
      pulledAfter = true
      yield utf8('<garbage')
    })()
    const { records, error } = await collect(parseAggregateReport(source))
    expect({ records: records.length, error, pulledAfter }).toEqual({
      records: 1,
      error: null,
      pulledAfter: false,
    })
  })
})
