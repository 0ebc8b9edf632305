// bun run bench:aggregate — DMARC aggregate parser throughput: a 100,000-record (~44 MB) report,
// generated in memory and fed in 64 KB chunks, through our tokenizer and through saxes (the
// reference). A benchmark, not a test: it prints each figure beside its target.

import { SaxesParser } from 'saxes'
import { createSaxesTokenizer } from '../domain/reports/aggregate/saxes-tokenizer.ts'
import { parseAggregateReport, parseAggregateReportWith } from '../domain/reports/aggregate-parser.ts'
import type { AggregateEvent } from '../domain/reports/aggregate-types.ts'
import { type Figure, report } from './report.ts'

const RECORDS = 100_000
const CHUNK = 64 * 1024
const TARGET_MBPS = 60

/** A deterministic pseudo-random sequence, so every run parses the same report. */
function lcg(seed: number) {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s % n
  }
}

// Shaped like Google's reports, without white space inside records (some reporters send them so;
// more elements per MB is the harder case): 1-2 DKIM results and 1 SPF result per record.
function generateReport(records: number): Uint8Array {
  const rand = lcg(42)
  const senders = ['example.com', 'mail.example.com', 'news.example.com', 'example.net']
  const signers = ['example.com', 'amazonses.com', 'sendgrid.net', 'mcsv.net', 'example.net']
  const results = ['pass', 'pass', 'pass', 'fail', 'softfail', 'neutral', 'temperror']
  const parts = [
    `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
 <report_metadata>
  <org_name>google.com</org_name>
  <email>noreply-dmarc-support@google.com</email>
  <extra_contact_info>https://support.google.com/a/answer/2466580</extra_contact_info>
  <report_id>11038226378739404135</report_id>
  <date_range>
   <begin>1718236800</begin>
   <end>1718323199</end>
  </date_range>
 </report_metadata>
 <policy_published>
  <domain>example.com</domain>
  <adkim>r</adkim>
  <aspf>r</aspf>
  <p>none</p>
  <sp>none</sp>
  <pct>100</pct>
 </policy_published>
`,
  ]
  for (let i = 0; i < records; i++) {
    const ip = `${1 + rand(223)}.${rand(256)}.${rand(256)}.${rand(256)}`
    const from = senders[rand(senders.length)]!
    const dkimCount = 1 + rand(2)
    let dkim = ''
    for (let d = 0; d < dkimCount; d++) {
      const domain = d === 0 ? from : signers[rand(signers.length)]!
      dkim +=
        `<dkim><domain>${domain}</domain><selector>s${rand(100000)}</selector>` +
        `<result>${results[rand(results.length)]}</result></dkim>`
    }
    parts.push(
      `<record><row><source_ip>${ip}</source_ip><count>${1 + rand(500)}</count>` +
        `<policy_evaluated><disposition>none</disposition><dkim>${rand(3) === 0 ? 'fail' : 'pass'}</dkim>` +
        `<spf>${rand(3) === 0 ? 'fail' : 'pass'}</spf></policy_evaluated></row>` +
        `<identifiers><header_from>${from}</header_from></identifiers><auth_results>${dkim}` +
        `<spf><domain>${from}</domain><result>${results[rand(results.length)]}</result></spf>` +
        '</auth_results></record>\n',
    )
  }
  parts.push('</feedback>\n')
  return new TextEncoder().encode(parts.join(''))
}

function* chunked(bytes: Uint8Array) {
  for (let i = 0; i < bytes.length; i += CHUNK) yield bytes.subarray(i, i + CHUNK)
}

interface Run {
  seconds: number
  records: number
  peakRss: number
}

async function measure(events: AsyncGenerator<AggregateEvent>): Promise<Run> {
  let peakRss = process.memoryUsage.rss()
  const started = performance.now()
  let records = 0
  for await (const event of events) {
    if (event.type === 'error') throw new Error(`${event.error.code}: ${event.error.message}`)
    if (event.type === 'record' && ++records % 5000 === 0)
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }
  const seconds = (performance.now() - started) / 1000
  return { seconds, records, peakRss: Math.max(peakRss, process.memoryUsage.rss()) }
}

/** The median of three runs: the machine is shared, and single runs vary by a factor of two. */
async function median(parse: () => AsyncGenerator<AggregateEvent>): Promise<Run> {
  const runs: Run[] = []
  for (let i = 0; i < 3; i++) runs.push(await measure(parse()))
  runs.sort((a, b) => a.seconds - b.seconds)
  return { ...runs[1]!, peakRss: Math.max(...runs.map((r) => r.peakRss)) }
}

/**
 * A report of `records` records made on the fly from one block of 1,000, so that nothing but the
 * current chunk exists: what the process then holds is the parser's own memory.
 */
async function* streamed(records: number): AsyncGenerator<Uint8Array> {
  const text = new TextDecoder().decode(generateReport(1000))
  const firstRecord = text.indexOf('<record>')
  const end = text.lastIndexOf('</feedback>')
  const encoder = new TextEncoder()
  const body = encoder.encode(text.slice(firstRecord, end))
  yield encoder.encode(text.slice(0, firstRecord))
  for (let block = 0; block < records / 1000; block++) yield* chunked(body)
  yield encoder.encode(text.slice(end))
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`
// Streamed, the parser's memory must stay under this whatever the report's size. With the report
// held in memory the peak is mostly garbage awaiting collection (the decoded chunks, ~2x the report
// over the run): JSC lets it grow with the live heap, which then includes the 44 MB report.
const MAX_GROWTH = 100 * 1024 * 1024
const MAX_GROWTH_IN_MEMORY = 128 * 1024 * 1024

// A warm-up pass lets the JIT compile the hot loops, as it would have in a long-running worker.
await measure(parseAggregateReport(chunked(generateReport(10_000))))

// Bounded memory: a report four times larger, streamed, must not need more memory.
Bun.gc(true)
const streamedBaseline = process.memoryUsage.rss()
const large = await measure(parseAggregateReport(streamed(4 * RECORDS)))

const bytes = generateReport(RECORDS)
const megabytes = bytes.length / 1e6
// Collected once here, not before each run: a forced full collection shrinks the heap, and the
// next run then pays for regrowing it, which a long-running worker does not.
Bun.gc(true)
const baselineRss = process.memoryUsage.rss()
const ours = await median(() => parseAggregateReport(chunked(bytes)))
const saxes = await measure(parseAggregateReportWith(createSaxesTokenizer, chunked(bytes)))

// saxes alone, without building records: the best it could possibly do.
const decoder = new TextDecoder()
const bare = new SaxesParser({ position: false })
const bareStart = performance.now()
for (const chunk of chunked(bytes)) bare.write(decoder.decode(chunk, { stream: true }))
bare.close()
const bareSeconds = (performance.now() - bareStart) / 1000

const rate = (run: Run | number) => megabytes / (typeof run === 'number' ? run : run.seconds)
const figures: Figure[] = [
  { metric: 'report size', value: `${megabytes.toFixed(1)} MB`, target: '~42 MB', ok: true },
  {
    metric: 'records parsed',
    value: String(ours.records),
    target: String(RECORDS),
    ok: ours.records === RECORDS && saxes.records === RECORDS && large.records === 4 * RECORDS,
  },
  {
    metric: 'parser throughput (median of 3)',
    value: `${rate(ours).toFixed(0)} MB/s`,
    target: `>= ${TARGET_MBPS} MB/s`,
    ok: rate(ours) >= TARGET_MBPS,
  },
  {
    metric: 'parser time',
    value: `${ours.seconds.toFixed(2)} s`,
    target: '<= 0.7 s',
    ok: ours.seconds <= 0.7,
  },
  {
    metric: 'peak RSS, report held in memory',
    value: `${mb(ours.peakRss)} (+${mb(ours.peakRss - baselineRss)})`,
    target: `+ <= ${mb(MAX_GROWTH_IN_MEMORY)} over ${mb(baselineRss)}`,
    ok: ours.peakRss - baselineRss <= MAX_GROWTH_IN_MEMORY,
  },
  {
    metric: `peak RSS, ${4 * RECORDS} records streamed`,
    value: `${mb(large.peakRss)} (+${mb(large.peakRss - streamedBaseline)})`,
    target: `+ <= ${mb(MAX_GROWTH)} over ${mb(streamedBaseline)}, whatever the size`,
    ok: large.peakRss - streamedBaseline <= MAX_GROWTH,
  },
  {
    metric: 'saxes reference throughput',
    value: `${rate(saxes).toFixed(0)} MB/s`,
    target: 'reference',
    ok: true,
  },
  { metric: 'saxes reference peak RSS', value: mb(saxes.peakRss), target: 'reference', ok: true },
  {
    metric: 'saxes tokenizing only',
    value: `${rate(bareSeconds).toFixed(0)} MB/s`,
    target: 'reference',
    ok: true,
  },
]
await report('aggregate-parser', figures)
