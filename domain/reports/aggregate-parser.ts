// DMARC aggregate report parser (RFC 7489 §7.2 and Appendix C; its drafts; RFC 9990). Streaming:
// input is read chunk by chunk and each <record> becomes an event as soon as it closes, so memory
// stays bounded by XmlLimits whatever the report's size. Bad input never throws: the last event is
// then an `error` with a stable code. Errors from the chunk source itself are not input and do throw.
//
// Events: one `metadata` (once report_metadata and policy_published are complete), then one
// `record` per <record>, in document order. Records placed before the metadata (against the schema
// order) are held back until it arrives, up to MAX_RECORDS_BEFORE_METADATA (then limit_exceeded).
// On an error, the records already emitted stay valid, and the report as a whole is not.
// Decisions and measurements: docs/decisions-aggregate-parser.md.

import { createChunkDecoder } from './aggregate/byte-decoder.ts'
import { createReportBuilder } from './aggregate/report-builder.ts'
import { createXmlTokenizer, type XmlSink, type XmlTokenizer } from './aggregate/xml-tokenizer.ts'
import type { AggregateEvent, XmlLimits } from './aggregate-types.ts'
import { DEFAULT_XML_LIMITS } from './aggregate-types.ts'

export type ReportChunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>

export type TokenizerFactory = (sink: XmlSink, limits: XmlLimits) => XmlTokenizer

export function parseAggregateReport(
  chunks: ReportChunks,
  limits: XmlLimits = DEFAULT_XML_LIMITS,
): AsyncGenerator<AggregateEvent> {
  return parseAggregateReportWith(createXmlTokenizer, chunks, limits)
}

/** The same parse over another XML tokenizer (the saxes reference in tests and the benchmark). */
export async function* parseAggregateReportWith(
  createTokenizer: TokenizerFactory,
  chunks: ReportChunks,
  limits: XmlLimits = DEFAULT_XML_LIMITS,
): AsyncGenerator<AggregateEvent> {
  const builder = createReportBuilder()
  const tokenizer = createTokenizer(builder.sink, limits)
  const decoder = createChunkDecoder()
  let blank = true
  const feed = (raw: string) => {
    // XML 1.0 §2.2 Char excludes NUL, and PostgreSQL's text refuses it: a raw one is damage in a
    // value, read as U+FFFD like a bad character reference (aggregate/xml-text.ts) or an invalid
    // UTF-8 byte, not a reason to refuse the report.
    const text = raw.includes('\u0000') ? raw.replaceAll('\u0000', '\uFFFD') : raw
    // `\s` includes U+FEFF, so a lone byte order mark is blank too.
    if (blank && /\S/.test(text)) blank = false
    const failure = tokenizer.write(text)
    if (failure !== null) builder.fail(failure)
  }
  for await (const chunk of chunks) {
    feed(decoder.decode(chunk))
    for (const event of builder.take()) yield event
    // Whatever follows </feedback> (or an error) is not read.
    if (builder.finished) return
  }
  feed(decoder.end())
  if (blank) builder.fail({ code: 'empty', message: 'the report is empty' })
  else if (!builder.finished) {
    const failure = tokenizer.end()
    if (failure !== null) builder.fail(failure)
  }
  builder.finish()
  for (const event of builder.take()) yield event
}
