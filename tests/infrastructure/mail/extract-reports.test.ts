import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { zipSync } from 'fflate'
import { parseFailureReport } from '../../../domain/reports/forensic.ts'
import {
  type ExtractLimits,
  extractReports,
  readAll,
  streamReports,
} from '../../../infrastructure/mail/extract-reports.ts'
import { type ReportPayload, sliceStream } from '../../../infrastructure/mail/report-payloads.ts'
import { attachment, bytesOf, multipart, singlePart, textPart } from './mime-builder.ts'

const AGGREGATE = 'tests/fixtures/dmarc-aggregate'
const FORENSIC = 'tests/fixtures/dmarc-forensic'
const LIMITS: ExtractLimits = {
  maxDecompressedBytes: 32 * 1024 * 1024,
  maxZipEntries: 100,
  maxCompressionRatio: 200,
  maxParts: 500,
}
const decoder = new TextDecoder()

async function extractOk(raw: Uint8Array | string, limits = LIMITS): Promise<ReportPayload[]> {
  const result = await extractReports(typeof raw === 'string' ? bytesOf(raw) : raw, limits)
  if (!result.ok) throw new Error(`expected payloads, got ${JSON.stringify(result.reason)}`)
  return result.value.payloads
}

async function contentOf(payload: ReportPayload): Promise<Uint8Array> {
  const read = await readAll(payload.open(), 64 * 1024 * 1024)
  if (!read.ok) throw new Error(`expected content, got ${JSON.stringify(read.reason)}`)
  return read.value
}

const stalwartReportId = async (name: string) =>
  (
    (await Bun.file(`${AGGREGATE}/stalwart-mail-auth/${name}.json`).json()) as {
      report_metadata: { report_id: string }
    }
  ).report_metadata.report_id

// Every aggregate sample delivered by mail: [file, compression, report id].
const AGGREGATE_MESSAGES: [string, 'gzip' | 'zip', string | (() => Promise<string>)][] = [
  [
    'parsedmarc/aggregate/mimecast-weird-gzip.eml',
    'gzip',
    '157a5fe30ec76f4bc0d8bccfc96c118a167a1280fee7c7465af5115e73082e5e',
  ],
  ['parsedmarc/aggregate/twilight.eml', 'zip', '1627703331531660819'],
  [
    'parsedmarc/aggregate/Report domain- borschow.com Submitter- google.com Report-ID- 949348866075514174.eml',
    'zip',
    '949348866075514174',
  ],
  ['mox/google.eml', 'zip', '13488712042596170873'],
  ['mox/mailru.eml', 'gzip', '82403907998914102491559779200'],
  ['mox/outlook.eml', 'gzip', '8be4eb9d89044800947965b8a040291c'],
  ['mox/xs4all.eml', 'gzip', 'xs4all.nl.1627349682.9725429@dmarc-reports.xs4all.net'],
  ['mox/yahoo.eml', 'gzip', '1559613526.307161'],
  ...(['100', '101', '102', '103', '104'] as const).map(
    (name): [string, 'gzip' | 'zip', () => Promise<string>] => [
      `stalwart-mail-auth/${name}.eml`,
      name === '100' ? 'zip' : 'gzip',
      () => stalwartReportId(name),
    ],
  ),
]

describe('aggregate report messages (fixtures)', () => {
  for (const [file, compression, reportId] of AGGREGATE_MESSAGES) {
    test(file, async () => {
      const payloads = await extractOk(await Bun.file(`${AGGREGATE}/${file}`).bytes())
      expect(payloads).toHaveLength(1)
      const payload = payloads[0]!
      expect(payload.kind).toBe('aggregate-xml')
      expect(payload.compression).toBe(compression)
      const xml = decoder.decode(await contentOf(payload))
      expect(xml.trimStart()).toStartWith('<?xml')
      expect(xml).toContain('<feedback')
      const id = typeof reportId === 'string' ? reportId : await reportId()
      expect(xml).toMatch(new RegExp(`<report_id>\\s*${id.replace(/[.]/g, '\\.')}\\s*</report_id>`))
    })
  }

  test('the Amazon SES gzip sent as application/octet-stream keeps its declared type and name', async () => {
    const [payload] = await extractOk(await Bun.file(`${AGGREGATE}/stalwart-mail-auth/104.eml`).bytes())
    expect(payload).toMatchObject({
      contentType: 'application/octet-stream',
      filename: 'amazonses.com!stalw.art!1663545600!1663632000.xml.gz',
      entryName: null,
    })
  })

  test('a zip payload names its entry', async () => {
    const [payload] = await extractOk(await Bun.file(`${AGGREGATE}/mox/google.eml`).bytes())
    expect(payload).toMatchObject({
      filename: 'google.com!ueber.net!1633996800!1634083199.zip',
      entryName: 'google.com!ueber.net!1633996800!1634083199.xml',
      contentType: 'application/zip',
    })
  })

  test('open() can be called again for a fresh stream', async () => {
    const [payload] = await extractOk(await Bun.file(`${AGGREGATE}/mox/yahoo.eml`).bytes())
    expect(await contentOf(payload!)).toEqual(await contentOf(payload!))
  })
})

describe('failure report messages (fixtures)', () => {
  const files = [
    'parsedmarc/DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml',
    'parsedmarc/[Netease DMARC Failure Report] Rent Reminder.eml',
    'parsedmarc/dmarc_ruf_report_linkedin.eml',
    'parsedmarc/dmarc_ruf_report_linkedin.crlf.eml',
    'parsedmarc/exim_plain_text_only_no_arf_part.eml',
    ...['001', '002', '003', '004', '005'].map((name) => `stalwart-mail-auth/${name}.eml`),
  ]
  for (const file of files) {
    test(file, async () => {
      const payloads = await extractOk(await Bun.file(`${FORENSIC}/${file}`).bytes())
      expect(payloads.map((payload) => payload.kind)).toEqual(['feedback-report'])
      const payload = payloads[0]!
      if (payload.kind !== 'feedback-report') throw new Error('unreachable')
      const hasArf = !file.includes('exim')
      expect(payload.parts.feedbackReport === null).toBe(!hasArf)
      if (hasArf) {
        expect(payload.parts.feedbackReport).toMatch(/^Feedback-Type:/)
        expect(decoder.decode(await contentOf(payload))).toBe(payload.parts.feedbackReport!)
      }
      expect(payload.parts.humanReadable).toBeString()
    })
  }

  test('only the header section of the reported message is handed over', async () => {
    const raw = await Bun.file(`${FORENSIC}/parsedmarc/dmarc_ruf_report_linkedin.eml`).bytes()
    const [payload] = await extractOk(raw)
    if (payload?.kind !== 'feedback-report') throw new Error('expected a feedback report')
    expect(payload.parts.originalHeaders).toContain(
      'Message-ID: <01010101010101010101010101010101@ABAB01MS0016',
    )
    expect(payload.parts.originalHeaders).not.toContain('HTML Text')
    expect(payload.parts.originalHeaders).not.toContain('Alternative')
  })
})

describe('Exim’s failure report: a plain single-part message', () => {
  // Exim's DMARC module (src/moan.c, ERRMESS_DMARC_FORENSIC) sends this body, with no
  // multipart/report around it; a Baruwa gateway's copy (parsedmarc issue #64) has a text/plain
  // Content-Type, Exim's own none at all.
  const body = [
    'A message claiming to be from you has failed the published DMARC',
    'policy for your domain.',
    '',
    '  Sender Domain: example.com',
    '  Sender IP Address: 191.252.30.42',
    '  Received Date: Wed, 20 Feb 2019 08:52:51 +0100',
    '  SPF Alignment: no',
    '  DKIM Alignment: no',
    '  DMARC Results: Reject',
    '',
    '------ This is a copy of the headers that were received before the error',
    '       was detected.',
    '',
    'Received: from mx.example.net ([191.252.30.42]) by mailwatch.example.com with esmtp',
    '',
  ].join('\r\n')
  const head = [
    'From: postmaster@mailwatch.example.com',
    'To: dmarc@example.com',
    'Subject: DMARC Forensic Report for example.com from IP 191.252.30.42',
    'Date: Wed, 20 Feb 2019 08:52:52 +0100',
  ]
  for (const [label, contentType] of [
    ['with a text/plain Content-Type', ['MIME-Version: 1.0', 'Content-Type: text/plain; charset=us-ascii']],
    ['with no Content-Type at all', []],
  ] as const) {
    test(label, async () => {
      const raw = `${[...head, ...contentType].join('\r\n')}\r\n\r\n${body}`
      const payloads = await extractOk(raw)
      expect(payloads.map((payload) => payload.kind)).toEqual(['feedback-report'])
      const payload = payloads[0]!
      if (payload.kind !== 'feedback-report') throw new Error('unreachable')
      expect(payload.parts.feedbackReport).toBeNull()
      expect(payload.parts.subject).toBe('DMARC Forensic Report for example.com from IP 191.252.30.42')
      expect(payload.parts.humanReadable).toContain('Sender IP Address: 191.252.30.42')
      const parsed = parseFailureReport(payload.parts)
      if (!parsed.ok) throw new Error(parsed.error.message)
      expect(parsed.report).toMatchObject({
        format: 'plain-text',
        sourceIp: '191.252.30.42',
        reportedDomains: ['example.com'],
        identityAlignment: ['none'],
      })
    })
  }

  test('the opening sentence alone is enough; a plain note to the report address is no report', async () => {
    const bySentence = await extractOk(`From: a@example.net\r\nSubject: report\r\n\r\n${body}`)
    expect(bySentence.map((payload) => payload.kind)).toEqual(['feedback-report'])
    const note = await extractReports(
      bytesOf('From: a@example.net\r\nSubject: DMARC question\r\n\r\nWhere do my DMARC reports go?\r\n'),
      LIMITS,
    )
    expect(note.ok).toBe(false)
  })
})

describe('parsedmarc extract_report samples wrapped in a message', () => {
  const dir = `${AGGREGATE}/parsedmarc/extract_report`
  for (const [name, type, compression] of [
    ['nice-input.xml.gz', 'application/gzip', 'gzip'],
    ['nice-input.xml.zip', 'application/zip', 'zip'],
    ['nice-input.xml', 'text/xml', 'none'],
  ] as const) {
    test(name, async () => {
      const bytes = await Bun.file(`${dir}/${name}`).bytes()
      const raw = multipart([textPart('A DMARC aggregate report.'), attachment(type, name, bytes)])
      const [payload, ...rest] = await extractOk(raw)
      expect(rest).toEqual([])
      expect(payload).toMatchObject({ kind: 'aggregate-xml', filename: name, compression })
      expect(await contentOf(payload!)).toEqual(await Bun.file(`${dir}/nice-input.xml`).bytes())
    })
  }
})

describe('formats are told by magic bytes, not by labels', () => {
  const xml = bytesOf(
    '<?xml version="1.0"?>\n<feedback><report_metadata><report_id>r-1</report_id></report_metadata></feedback>\n',
  )
  const tlsJson = bytesOf(
    JSON.stringify({ 'organization-name': 'x', 'report-id': 't-1', policies: [] }, null, 2),
  )

  test('gzip named .zip and labelled application/zip', async () => {
    const [payload] = await extractOk(multipart([attachment('application/zip', 'report.zip', gzipSync(xml))]))
    expect(payload).toMatchObject({
      kind: 'aggregate-xml',
      compression: 'gzip',
      contentType: 'application/zip',
    })
    expect(await contentOf(payload!)).toEqual(xml)
  })

  test('zip named .gz and sent as application/octet-stream', async () => {
    const zip = zipSync({ 'report.xml': xml })
    const [payload] = await extractOk(
      multipart([attachment('application/octet-stream', 'report.xml.gz', zip)]),
    )
    expect(payload).toMatchObject({ kind: 'aggregate-xml', compression: 'zip', entryName: 'report.xml' })
    expect(await contentOf(payload!)).toEqual(xml)
  })

  test('XML attached as text/plain', async () => {
    const [payload] = await extractOk(
      multipart([textPart('hello'), attachment('text/plain', 'report.txt', xml)]),
    )
    expect(payload).toMatchObject({ kind: 'aggregate-xml', compression: 'none', contentType: 'text/plain' })
    expect(await contentOf(payload!)).toEqual(xml)
  })

  test('XML with a byte order mark, as application/octet-stream without a name', async () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...xml])
    const [payload] = await extractOk(singlePart(attachment('application/octet-stream', null, withBom)))
    expect(payload?.kind).toBe('aggregate-xml')
    expect(await contentOf(payload!)).toEqual(withBom)
  })

  test('bare XML as the message body, no attachment and no Content-Type', async () => {
    const raw = [
      'From: a@example.net',
      'To: dmarc@example.com',
      'Subject: report',
      '',
      decoder.decode(xml),
    ].join('\r\n')
    const [payload] = await extractOk(raw)
    expect(payload?.kind).toBe('aggregate-xml')
    expect(decoder.decode(await contentOf(payload!))).toContain('<report_id>r-1</report_id>')
  })

  test('XML pasted inline after a text introduction', async () => {
    const raw = multipart([textPart('Here is the report:'), textPart(decoder.decode(xml))])
    const [payload] = await extractOk(raw)
    expect(payload?.kind).toBe('aggregate-xml')
    expect(decoder.decode(await contentOf(payload!))).toBe(decoder.decode(xml).trim())
  })

  test('TLS-RPT: application/tlsrpt+gzip and +json (RFC 8460 §5.3), and JSON in the body', async () => {
    const raw = multipart(
      [
        textPart('TLS report'),
        attachment('application/tlsrpt+gzip', 'x!example.com!1!2!t-1.json.gz', gzipSync(tlsJson)),
      ],
      'report',
      '; report-type="tlsrpt"',
    )
    const [gz] = await extractOk(raw)
    expect(gz).toMatchObject({ kind: 'tls-rpt-json', compression: 'gzip' })
    expect(await contentOf(gz!)).toEqual(tlsJson)
    const [json] = await extractOk(multipart([attachment('application/tlsrpt+json', 'r.json', tlsJson)]))
    expect(json).toMatchObject({ kind: 'tls-rpt-json', compression: 'none' })
    const [body] = await extractOk(singlePart(textPart(decoder.decode(tlsJson), 'application/json')))
    expect(body?.kind).toBe('tls-rpt-json')
    const [text] = await extractOk(multipart([textPart(`Report follows.\n\n${decoder.decode(tlsJson)}\n`)]))
    expect(text).toMatchObject({ kind: 'tls-rpt-json', contentType: 'text/plain' })
    expect(await contentOf(text!)).toEqual(tlsJson)
  })

  test('a report forwarded as an attached message is found', async () => {
    const inner = multipart([attachment('application/gzip', 'r.xml.gz', gzipSync(xml))])
    const raw = multipart([
      textPart('FYI, forwarded'),
      { headers: ['Content-Type: message/rfc822', 'Content-Disposition: attachment'], body: inner },
    ])
    const [payload] = await extractOk(raw)
    expect(payload?.kind).toBe('aggregate-xml')
    expect(await contentOf(payload!)).toEqual(xml)
  })

  test('images, HTML and other attachments are not reports', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])
    const raw = multipart([
      textPart('<html><body>hello</body></html>', 'text/html'),
      attachment('image/png', 'logo.png', png),
      attachment('text/html', 'page.html', bytesOf('<!DOCTYPE html><html><body>x</body></html>')),
      attachment('application/json', 'other.json', bytesOf('{"hello": "world"}')),
    ])
    const result = await extractReports(bytesOf(raw), LIMITS)
    // A JSON attachment is taken for TLS-RPT (its parser judges it); nothing else is a report.
    expect(result.ok && result.value.payloads.map((payload) => payload.kind)).toEqual(['tls-rpt-json'])
  })

  test('a message without any report', async () => {
    const result = await extractReports(bytesOf(multipart([textPart('Lunch at noon?')])), LIMITS)
    expect(result).toEqual({ ok: false, reason: { code: 'no_report_found', message: expect.any(String) } })
    expect(await extractReports(new Uint8Array(0), LIMITS)).toMatchObject({
      ok: false,
      reason: { code: 'no_report_found' },
    })
  })
})

describe('a bare report file as the whole message (POST /ingest/reports, cli import, upload)', () => {
  const P = `${AGGREGATE}/parsedmarc/extract_report`
  test('XML, gzip and zip are read like an attachment, to the same XML', async () => {
    const xml = new Uint8Array(await Bun.file(`${P}/nice-input.xml`).arrayBuffer())
    for (const name of ['nice-input.xml', 'nice-input.xml.gz', 'nice-input.xml.zip']) {
      const raw = new Uint8Array(await Bun.file(`${P}/${name}`).arrayBuffer())
      const [payload, ...rest] = await extractOk(raw)
      expect(rest).toEqual([])
      expect(payload?.kind).toBe('aggregate-xml')
      expect(await contentOf(payload!)).toEqual(xml)
    }
  })

  test('TLS-RPT JSON; a corrupt archive or an oversize report is refused with its reason', async () => {
    const json = new Uint8Array(await Bun.file('tests/fixtures/tls-rpt/rfc8460-example.json').arrayBuffer())
    expect((await extractOk(json))[0]?.kind).toBe('tls-rpt-json')
    const corrupt = await extractReports(
      new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]),
      LIMITS,
    )
    expect(corrupt).toMatchObject({ ok: false, reason: { code: 'decompression_failed' } })
    const big = await extractReports(json, { ...LIMITS, maxDecompressedBytes: 100 })
    expect(big).toMatchObject({ ok: false, reason: { code: 'limit_exceeded', limit: 'decompressed_bytes' } })
  })
})

describe('streaming (streamReports, as the worker reads messages)', () => {
  const xmlOf = (id: string) =>
    bytesOf(
      `<?xml version="1.0"?><feedback><report_metadata><report_id>${id}</report_id></report_metadata></feedback>`,
    )
  const raw = multipart([
    attachment('application/gzip', 'a.xml.gz', gzipSync(xmlOf('first'))),
    attachment('application/zip', 'b.zip', zipSync({ 'b.xml': xmlOf('second') })),
    attachment('text/xml', 'c.xml', xmlOf('third')),
  ])

  test('payloads are handed over in order, each readable once while it is handed', async () => {
    const seen: string[] = []
    const result = await streamReports(sliceStream(bytesOf(raw)), LIMITS, async (payload) => {
      const read = await readAll(payload.open(), 1024 * 1024)
      if (!read.ok) throw new Error('unreadable')
      seen.push(/<report_id>(\w+)</.exec(decoder.decode(read.value))![1]!)
      expect(() => payload.open()).toThrow('can be read once')
    })
    expect(result).toEqual({ ok: true, handed: 3, skipped: [] })
    expect(seen).toEqual(['first', 'second', 'third'])
  })

  test('a payload left unread (or read in part) is skipped and the message goes on', async () => {
    const kinds: string[] = []
    let index = 0
    const result = await streamReports(sliceStream(bytesOf(raw)), LIMITS, async (payload) => {
      kinds.push(`${payload.compression}`)
      if (index++ === 0) return
      for await (const _ of payload.open()) break
    })
    expect(result).toMatchObject({ ok: true, handed: 3 })
    expect(kinds).toEqual(['gzip', 'zip', 'none'])
  })
})

describe('a storage failure is not a bad part', () => {
  // The error of the store a payload is handed to (the database gone, a refused value), or of the
  // message read back from the database, must reach
  // the job, which is retried: never a skipped part, a quarantine, or a message marked processed.
  // Large enough (~200 KB of text that does not compress away) that half of any form of it is
  // well past the first bytes the extraction sniffs: the failure comes while a payload streams.
  let seed = 7
  const noise = Array.from({ length: 200_000 }, () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    return String.fromCharCode(97 + (seed % 26))
  }).join('')
  const xml = bytesOf(
    `<?xml version="1.0"?><feedback><!-- ${noise} --><report_metadata><report_id>x</report_id></report_metadata></feedback>`,
  )
  const cases: [string, Uint8Array][] = [
    ['a bare XML file', xml],
    ['a bare gzip file', gzipSync(xml)],
    ['a bare zip file', zipSync({ 'r.xml': xml })],
    ['an email with the report attached', bytesOf(multipart([attachment('text/xml', 'r.xml', xml)]))],
    [
      'an email with a zip attached',
      bytesOf(multipart([attachment('application/zip', 'r.zip', zipSync({ 'r.xml': xml }))])),
    ],
    ['an email with the report in its body', bytesOf(singlePart(textPart(decoder.decode(xml))))],
  ]
  for (const [name, raw] of cases)
    test(`${name}: an error reading the message back comes out of streamReports`, async () => {
      const failure = new Error('connection lost while reading the message')
      // Half the message, then the storage fails (as a database read of its pieces would).
      async function* halfThenFail() {
        yield raw.subarray(0, Math.floor(raw.byteLength / 2))
        throw failure
      }
      const outcome = await streamReports(halfThenFail(), LIMITS, async (payload) => {
        for await (const _ of payload.open()) {
          // read, as a store would
        }
      }).then(
        (result) => ({ returned: result }),
        (error: unknown) => ({ thrown: error }),
      )
      expect(outcome).toEqual({ thrown: failure })
    })
  for (const [name, raw] of cases)
    test(`${name}: the store's own error comes out of streamReports`, async () => {
      const failure = new Error('connection lost while storing')
      const outcome = await streamReports(sliceStream(raw), LIMITS, async () => {
        throw failure
      }).then(
        (result) => ({ returned: result }),
        (error: unknown) => ({ thrown: error }),
      )
      expect(outcome).toEqual({ thrown: failure })
    })
})

describe('bare reports (a report file rather than an email)', () => {
  test('a gzip, a zip and plain XML are each read like one attachment', async () => {
    const xml = bytesOf(
      '<?xml version="1.0"?><feedback><report_metadata><report_id>bare</report_id></report_metadata></feedback>',
    )
    for (const [file, compression] of [
      [gzipSync(xml), 'gzip'],
      [zipSync({ 'r.xml': xml }), 'zip'],
      [xml, 'none'],
    ] as const) {
      const payloads = await extractOk(new Uint8Array(file))
      expect(payloads.map((payload) => [payload.kind, payload.compression])).toEqual([
        ['aggregate-xml', compression],
      ])
      expect(await contentOf(payloads[0]!)).toEqual(xml)
    }
  })
})
