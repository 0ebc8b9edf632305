import type { AggregateRecord } from '../../domain/reports/aggregate-types.ts'
import type { RecordOutcome } from '../../domain/reports/store-aggregate.ts'
import { copyField, copyText, type RowFormat } from './sql-tx.ts'

// One aggregate record as an aggregate_records row, in two forms: its values (INSERT parameters:
// PGlite, or rows that end within copyRows's first batch) and its COPY text line built directly (a large report on
// PostgreSQL). The line is byte-identical to the values through copyField joined by tabs
// (tests/infrastructure/reports/aggregate-record-line.test.ts), but each column's type is known:
// numbers and booleans need no test, the four constant columns are escaped once per report, and
// no array of 18 values is built per record. Measured standalone on the bench's 100,000-record
// report (28.8 MB of COPY text, the same SHA-256 both ways; alternated rounds, load 1.2-5 on 2
// cores): the lines and their 256 KB Buffers in min 276-285 / median 344-371 ms against 414-515 /
// 560-609 ms; through copyRows into PostgreSQL, the process's CPU min 292-349 / median 326-416 ms
// against 405-476 / 421-574 ms. Checking the whole line raw with one regex (17 tabs, no escape)
// was slower (min 662 ms against 229 ms); not kept.

export const RECORD_COLUMNS = [
  'report_id',
  'account_id',
  'domain_id',
  'day',
  'source_ip',
  'count',
  'disposition',
  'dkim_evaluated',
  'spf_evaluated',
  'reasons',
  'header_from',
  'envelope_from',
  'envelope_to',
  'dkim',
  'spf',
  'dkim_aligned',
  'spf_aligned',
  'dmarc_pass',
] as const

export type RecordItem = readonly [AggregateRecord, RecordOutcome]

interface ReportColumns {
  reportId: number
  accountId: string
  domainId: number
  day: string
}

export function recordRow(report: ReportColumns, record: AggregateRecord, outcome: RecordOutcome): unknown[] {
  return [
    report.reportId,
    report.accountId,
    report.domainId,
    report.day,
    record.sourceIp,
    record.count,
    record.disposition,
    record.dkimEvaluated,
    record.spfEvaluated,
    JSON.stringify(record.reasons),
    record.headerFrom,
    record.envelopeFrom,
    record.envelopeTo,
    JSON.stringify(record.dkim),
    JSON.stringify(record.spf),
    outcome.dkimAligned,
    outcome.spfAligned,
    outcome.dmarcPass,
  ]
}

// COPY text format (PostgreSQL docs, "COPY", File Formats): backslash, tab, newline and carriage
// return are the characters to escape; most values have none, and copyText's test is much cheaper
// than a replace (the same rule as copyField, which handles the rare value that matches).
const text = copyText

function nullable(value: string | null): string {
  return value == null ? '\\N' : copyText(value)
}

// JSON.stringify escapes every control character (ECMA-262 QuoteJSONString), so its output never
// holds a tab, newline or carriage return: only its backslashes need doubling for COPY.
// A serializer written by hand for the DKIM and SPF results (same bytes on the bench report) was
// slower: min 179 / median 240 ms against 132 / 168 ms for JSON.stringify; not kept.
function json(value: readonly unknown[]): string {
  // Most records have no override reason (and some no DKIM signature): no stringify for those.
  if (value.length === 0) return '[]'
  const encoded = JSON.stringify(value)
  return encoded.includes('\\') ? encoded.replaceAll('\\', '\\\\') : encoded
}

/** The rows of one report's records: values, and the COPY line with the constant columns escaped once. */
export function recordFormat(report: ReportColumns): RowFormat<RecordItem> {
  const prefix = `${[report.reportId, report.accountId, report.domainId, report.day].map(copyField).join('\t')}\t`
  return {
    values: ([record, outcome]) => recordRow(report, record, outcome),
    line: ([r, o]) =>
      `${prefix}${text(r.sourceIp)}\t${r.count}\t${text(r.disposition)}\t${nullable(r.dkimEvaluated)}\t${nullable(r.spfEvaluated)}\t${json(r.reasons)}\t${text(r.headerFrom)}\t${nullable(r.envelopeFrom)}\t${nullable(r.envelopeTo)}\t${json(r.dkim)}\t${json(r.spf)}\t${o.dkimAligned ? 't' : 'f'}\t${o.spfAligned ? 't' : 'f'}\t${o.dmarcPass ? 't' : 'f'}`,
  }
}
