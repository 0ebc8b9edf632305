import { describe, expect, test } from 'bun:test'
import { zipSync } from 'fflate'
import { type ExtractLimits, extractReports, readAll } from '../../../infrastructure/mail/extract-reports.ts'
import type { ReportPayload } from '../../../infrastructure/mail/report-payloads.ts'
import { attachment, bytesOf, multipart } from './mime-builder.ts'

// A gzip inside a gzip ("gzipped twice", which tierpod/dmarc-report-converter reads) is unpacked
// one more level, under the same limits as one level; anything nested deeper or otherwise is not
// (infrastructure/mail/report-payloads.ts, docs/ingestion.md "Processing").

const MiB = 1024 * 1024
const LIMITS: ExtractLimits = {
  maxDecompressedBytes: 32 * MiB,
  maxZipEntries: 100,
  maxCompressionRatio: 200,
  maxParts: 500,
}
const XML = bytesOf(
  '<?xml version="1.0"?><feedback><report_metadata><report_id>twice</report_id></report_metadata></feedback>',
)
const gzip = (bytes: Uint8Array, times = 1) => {
  let out = new Uint8Array(bytes)
  for (let i = 0; i < times; i++) out = Bun.gzipSync(out)
  return out
}
/** An XML start and `mebibytes` MiB of zeros: deflate shrinks them ~1,000:1. */
const zeros = (mebibytes: number) => {
  const head = bytesOf('<?xml version="1.0"?><feedback>')
  const bytes = new Uint8Array(head.length + mebibytes * MiB)
  bytes.set(head)
  return bytes
}

async function extract(raw: Uint8Array | string, limits = LIMITS) {
  const result = await extractReports(typeof raw === 'string' ? bytesOf(raw) : raw, limits)
  if (!result.ok) throw new Error(`expected payloads, got ${JSON.stringify(result.reason)}`)
  return result.value
}

async function contentOf(payload: ReportPayload | undefined) {
  const read = await readAll(payload!.open(), 64 * MiB)
  return read.ok ? read.value : read.reason
}

describe('a gzip inside a gzip', () => {
  test('as an attachment and as a bare report file: the XML is handed over', async () => {
    const twice = gzip(XML, 2)
    const mail = await extract(multipart([attachment('application/gzip', 'r.xml.gz.gz', twice)]))
    expect(mail.skipped).toEqual([])
    expect(mail.payloads).toHaveLength(1)
    expect(mail.payloads[0]).toMatchObject({
      kind: 'aggregate-xml',
      compression: 'gzip',
      filename: 'r.xml.gz.gz',
    })
    expect(await contentOf(mail.payloads[0])).toEqual(XML)
    const bare = await extract(twice)
    expect(await contentOf(bare.payloads[0])).toEqual(XML)
  })

  test('the ratio is judged against the attachment, so the two levels do not multiply past it', async () => {
    const body = zeros(8)
    const twice = gzip(body, 2)
    const limits = { ...LIMITS, maxCompressionRatio: 2000 }
    // Each level alone is within 2,000:1 (the inner ~1,000:1, the outer's output under the 1 MiB
    // the ratio is judged from), together far past it.
    expect(body.length / gzip(body).length).toBeLessThan(2000)
    expect(body.length / twice.length).toBeGreaterThan(2000)
    const { payloads } = await extract(multipart([attachment('application/gzip', 'r.gz', twice)]), limits)
    expect(await contentOf(payloads[0])).toMatchObject({ code: 'limit_exceeded', limit: 'compression_ratio' })
    // The same bytes gzipped once pass the same limit.
    const once = await extract(multipart([attachment('application/gzip', 'r.gz', gzip(body))]), limits)
    expect(await contentOf(once.payloads[0])).toHaveLength(body.length)
  })

  test('the decompressed size limit holds for the inner output', async () => {
    const limits = { ...LIMITS, maxDecompressedBytes: 2 * MiB, maxCompressionRatio: 1_000_000 }
    const { payloads } = await extract(gzip(zeros(3), 2), limits)
    expect(await contentOf(payloads[0])).toMatchObject({
      code: 'limit_exceeded',
      limit: 'decompressed_bytes',
    })
  })
})

describe('nesting that is still refused', () => {
  test.each([
    [
      'a third gzip',
      gzip(XML, 3),
      'gzip',
      'a gzip archive inside a gzip inside a gzip archive is not unpacked',
    ],
    [
      'a zip inside a gzip',
      gzip(zipSync({ 'r.xml': XML })),
      'gzip',
      'a zip archive inside a gzip archive is not unpacked',
    ],
    [
      'a gzip inside a zip',
      zipSync({ 'r.xml.gz': gzip(XML) }),
      'zip',
      'a gzip archive inside a zip archive is not unpacked',
    ],
  ])('%s', async (_, bytes, type, message) => {
    const { payloads, skipped } = await extract(
      multipart([
        attachment(`application/${type}`, `r.${type}`, bytes),
        attachment('text/xml', 'ok.xml', XML),
      ]),
    )
    expect(payloads.map((payload) => payload.filename)).toEqual(['ok.xml'])
    expect(skipped).toMatchObject([
      { filename: `r.${type}`, reason: { code: 'decompression_failed', message } },
    ])
  })
})
