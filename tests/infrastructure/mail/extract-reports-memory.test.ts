import { expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { slices } from '../../../infrastructure/mail/chunk-reader.ts'
import { type ExtractLimits, streamReports } from '../../../infrastructure/mail/extract-reports.ts'
import { paced, processPacer } from '../../../infrastructure/runtime/gc-pacer.ts'
import { attachment, multipart } from './mime-builder.ts'

// A message near the 64 MB intake limit through extraction, as the worker reads it (pieces of a
// megabyte, the payload parsed as it streams): the process must not grow by anything like the
// message. bench:ingest measures the whole service against the tighter targets (docs/ingestion.md).

const MB = 1e6
const LIMITS: ExtractLimits = {
  maxDecompressedBytes: 1024 * 1024 * 1024,
  maxZipEntries: 32,
  maxCompressionRatio: 1000,
  maxParts: 1000,
}

function aggregate(records: number): Uint8Array {
  const rows: string[] = []
  for (let i = 0; i < records; i++) {
    rows.push(
      `<record><row><source_ip>198.51.${(i >> 8) & 255}.${i & 255}</source_ip><count>${1 + (i % 9)}</count>` +
        '<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>' +
        '<identifiers><header_from>example.com</header_from></identifiers>' +
        '<auth_results><dkim><domain>example.com</domain><selector>s1</selector><result>pass</result></dkim>' +
        `<spf><domain>bounce${i % 97}.example.com</domain><result>pass</result></spf></auth_results></record>\n`,
    )
  }
  const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>google.com</org_name><email>noreply@google.com</email><report_id>mem-1</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata><policy_published><domain>example.com</domain><p>none</p></policy_published>\n${rows.join('')}</feedback>\n`
  return Bun.gzipSync(new TextEncoder().encode(xml))
}

async function vm(field: 'VmRSS' | 'VmHWM'): Promise<number | null> {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(await Bun.file('/proc/self/status').text())
    return match === null ? null : Number(match[1]) * 1024
  } catch {
    return null
  }
}

test('a 60 MB message streams through extraction in bounded memory', async () => {
  // A gzipped report of 50,000 records and ~57 MB of attachments that are no report (base64).
  const gz = aggregate(50_000)
  const filler = randomBytes(20 * 1024 * 1024)
  // A PDF's magic, so no run of random bytes starts like a report (`{`, `<`, gzip, zip: sniff.ts).
  filler.set(new TextEncoder().encode('%PDF-1.7\n'), 0)
  const raw = new TextEncoder().encode(
    multipart([
      attachment('application/gzip', 'google.com!example.com!1700000000!1700086399.xml.gz', gz),
      attachment('application/pdf', 'scan-1.pdf', filler),
      attachment('application/pdf', 'scan-2.pdf', filler),
    ]),
  )
  expect(raw.byteLength).toBeGreaterThan(55 * MB)
  Bun.gc(true)
  const before = await vm('VmRSS')
  // The kernel's high-water mark from here on (Linux); elsewhere RSS is sampled.
  const kernel =
    before !== null &&
    (await Bun.write('/proc/self/clear_refs', '5').then(
      () => true,
      () => false,
    ))
  let sampled = process.memoryUsage.rss()
  const sampler = kernel
    ? null
    : setInterval(() => (sampled = Math.max(sampled, process.memoryUsage.rss())), 10)
  const start = before ?? process.memoryUsage.rss()
  let records = 0
  let kinds: string[] = []
  const result = await streamReports(
    paced(slices(raw, 1024 * 1024), processPacer),
    LIMITS,
    async (payload) => {
      kinds.push(payload.kind)
      for await (const event of parseAggregateReport(paced(payload.open(), processPacer)))
        if (event.type === 'record') records++
    },
  )
  if (sampler !== null) clearInterval(sampler)
  const peak = kernel ? ((await vm('VmHWM')) ?? sampled) : sampled
  expect(result).toMatchObject({ ok: true, handed: 1 })
  expect(kinds).toEqual(['aggregate-xml'])
  expect(records).toBe(50_000)
  const growth = peak - start
  console.log(
    `extraction of a ${(raw.byteLength / MB).toFixed(0)} MB message: peak RSS growth ${Math.round(growth / MB)} MB`,
  )
  // The whole message is 60 MB and its report 25 MB of XML: holding either would break this.
  expect(growth).toBeLessThan(120 * MB)
  kinds = []
}, 120_000)
