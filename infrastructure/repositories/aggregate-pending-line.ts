import type { SourceRollup } from '../../domain/reports/report-rollup.ts'
import { copyText, type RowFormat } from './sql-tx.ts'

// A large report's per-source rollup as rollup_pending rows (aggregate-report-merge.ts): the line
// format alone, beside the records' (aggregate-record-line.ts).

export const PENDING_COLUMNS = [
  'report_id',
  'account_id',
  'source_ip',
  'disposition',
  'dkim_aligned',
  'spf_aligned',
  'messages',
  'spf_pass',
  'dkim_pass',
  'forwarded',
  'dkim_domains',
  'spf_domains',
] as const

/**
 * A source as a rollup_pending row: values (PGlite's INSERT batches) and the COPY line built with
 * the column types known, as for the records (aggregate-record-line.ts), so no array of values is
 * built and tested value by value for each of a large report's ~100,000 sources.
 */
export function pendingFormat(reportId: number, accountId: string): RowFormat<SourceRollup> {
  const head = `${reportId}\t${copyText(accountId)}\t`
  return {
    values: (s) => [
      reportId,
      accountId,
      s.sourceIp,
      s.disposition,
      s.dkimAligned,
      s.spfAligned,
      s.messages,
      s.spfPass,
      s.dkimPass,
      s.forwarded,
      s.dkimDomains.join(' '),
      s.spfDomains.join(' '),
    ],
    line: (s) =>
      `${head}${copyText(s.sourceIp)}\t${copyText(s.disposition)}\t${s.dkimAligned ? 't' : 'f'}\t${s.spfAligned ? 't' : 'f'}\t${s.messages}\t${s.spfPass}\t${s.dkimPass}\t${s.forwarded}\t${copyText(s.dkimDomains.join(' '))}\t${copyText(s.spfDomains.join(' '))}`,
  }
}
