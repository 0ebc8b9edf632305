import type { DomainMatch, QuarantineReason } from '../ingest/process-message.ts'
import { type FailureReportParts, type ForensicReport, parseFailureReport } from './forensic.ts'
import { forensicReportForStorage, type HexHash } from './forensic-redaction.ts'
import { parseTlsRptReport, type TlsRptReport } from './tls-rpt.ts'

// The one storage path of TLS-RPT reports (RFC 8460) and failure reports (RFC 6591), whether they
// arrive by mail (the report job) or over HTTPS (POST /api/v1/ingest/tls-rpt, RFC 8460 §6.4): parse,
// find the account's verified domain the report is about, store (deduplicated). What cannot be
// stored comes back as a reason (quarantined by the job, a 422 for the API: docs/ingestion.md).

/** Stores reports, deduplicated (implemented by infrastructure/repositories/pg-forensic-tls-store.ts). */
export interface FailureTlsStore {
  insertTls(input: {
    accountId: string
    domainId: number
    messageId: string | null
    report: TlsRptReport
  }): Promise<{ status: 'stored' | 'duplicate'; id: number }>
  insertForensic(input: {
    accountId: string
    domainId: number
    messageId: string | null
    contentHash: string
    report: ForensicReport
  }): Promise<{ status: 'stored' | 'duplicate'; id: number }>
  /** Whether the account keeps failure reports' local parts redacted (the default). */
  redactsForensic(accountId: string): Promise<boolean>
}

export interface ReportStorageDeps {
  reports: FailureTlsStore
  /** The account's verified domain a report's policy domain belongs to (docs/ingestion.md). */
  resolveDomain(accountId: string, policyDomain: string): Promise<DomainMatch>
}

export interface ReportTarget {
  accountId: string
  /** The intake message the report came in; null for an HTTPS submission. */
  messageId: string | null
}

export type StoredReport =
  | { ok: true; status: 'stored' | 'duplicate'; id: number; domain: string }
  | { ok: false; reason: QuarantineReason }

/** A TLS-RPT report (JSON text). `name`, when given, prefixes a parse error (the mail's file). */
export async function storeTlsReport(
  deps: ReportStorageDeps,
  input: ReportTarget & { json: string; name?: string },
): Promise<StoredReport & { reportId?: string }> {
  const parsed = parseTlsRptReport(input.json)
  if (!parsed.ok) {
    const { code, message } = parsed.error
    return {
      ok: false,
      reason: { code, message: input.name === undefined ? message : `${input.name}: ${message}` },
    }
  }
  const domain = await deps.resolveDomain(input.accountId, parsed.report.policies[0]?.policyDomain ?? '')
  if (!domain.ok) return domain
  const stored = await deps.reports.insertTls({
    accountId: input.accountId,
    domainId: domain.domainId,
    messageId: input.messageId,
    report: parsed.report,
  })
  return { ok: true, ...stored, domain: domain.name, reportId: parsed.report.reportId }
}

/** A failure report, its local parts redacted unless the account opted out (docs/ingestion.md). */
export async function storeFailureReport(
  deps: ReportStorageDeps & { sha256: HexHash },
  input: ReportTarget & { parts: FailureReportParts },
): Promise<StoredReport> {
  const parsed = parseFailureReport(input.parts)
  if (!parsed.ok) return { ok: false, reason: parsed.error }
  const report = parsed.report
  const fromDomain = report.original?.from?.match(/@([^>\s]+)/)?.[1]
  const domain = await deps.resolveDomain(input.accountId, report.reportedDomains[0] ?? fromDomain ?? '')
  if (!domain.ok) return domain
  const keepLocalParts = !(await deps.reports.redactsForensic(input.accountId))
  const stored = await deps.reports.insertForensic({
    accountId: input.accountId,
    domainId: domain.domainId,
    messageId: input.messageId,
    contentHash: deps.sha256(JSON.stringify(report)),
    report: forensicReportForStorage(report, { hash: deps.sha256, keepLocalParts }),
  })
  return { ok: true, ...stored, domain: domain.name }
}
