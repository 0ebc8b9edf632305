import type { DomainMatch, QuarantineReason } from '../ingest/process-message.ts'
import { type FailureReportParts, type ForensicReport, parseFailureReport } from './forensic.ts'
import { forensicReportForStorage, type HexHash } from './forensic-redaction.ts'
import { parseTlsRptReport, type TlsRptPolicyResult, type TlsRptReport } from './tls-rpt.ts'

// The one storage path of TLS-RPT reports (RFC 8460) and failure reports (RFC 6591), whether they
// arrive by mail (the report job) or over HTTPS (POST /api/v1/ingest/tls-rpt, RFC 8460 §6.4): parse,
// find the account's verified domain the report is about, store (deduplicated). What cannot be
// stored comes back as a reason (quarantined by the job, a 422 for the API: docs/ingestion.md).

/** Stores reports, deduplicated (implemented by infrastructure/repositories/pg-forensic-tls-store.ts). */
export interface FailureTlsStore {
  /** One domain's part of a report: its policies only; it counts their sessions once (tls-sessions.ts). */
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

/**
 * A TLS-RPT report (JSON text). `name`, when given, prefixes a parse error (the mail's file).
 *
 * A report is stored once per domain of the account its policies name (RFC 8460 §4.4: one entry
 * per policy evaluated, each with its own policy-domain), each row holding that domain's policies
 * and counting their sessions once (tls-sessions.ts). Policies for a domain that is not the
 * account's are left out when another part was stored. A part for a domain that waits for its
 * verification comes back as `waiting` beside the parts stored: the report job then makes the
 * message wait, and its retry finds the stored parts as duplicates, as for a message whose later
 * report waits (docs/ingestion.md, "Reports waiting for verification"). The answer names the first
 * part stored now, else the first part.
 */
export async function storeTlsReport(
  deps: ReportStorageDeps,
  input: ReportTarget & { json: string; name?: string },
): Promise<StoredTlsReportParts> {
  const parsed = parseTlsRptReport(input.json)
  if (!parsed.ok) {
    const { code, message } = parsed.error
    return {
      ok: false,
      reason: { code, message: input.name === undefined ? message : `${input.name}: ${message}` },
    }
  }
  const report = parsed.report
  const parts = new Map<number, { name: string; policies: TlsRptPolicyResult[] }>()
  let notInAccount: QuarantineReason | null = null
  let waiting: QuarantineReason | null = null
  for (const [policyDomain, policies] of policiesByDomain(report.policies)) {
    const domain = await deps.resolveDomain(input.accountId, policyDomain)
    if (!domain.ok) {
      if (domain.reason.code === 'domain_not_in_account') notInAccount ??= domain.reason
      else waiting ??= domain.reason
      continue
    }
    // Two policy domains may be one domain of the account (a subdomain reports to its parent).
    const part = parts.get(domain.domainId) ?? { name: domain.name, policies: [] }
    part.policies.push(...policies)
    parts.set(domain.domainId, part)
  }
  let first: (StoredReport & { ok: true }) | null = null
  for (const [domainId, part] of parts) {
    const stored = await deps.reports.insertTls({
      accountId: input.accountId,
      domainId,
      messageId: input.messageId,
      report: { ...report, policies: part.policies },
    })
    if (first === null || (first.status === 'duplicate' && stored.status === 'stored'))
      first = { ok: true, ...stored, domain: part.name }
  }
  if (first === null) {
    const reason = waiting ??
      notInAccount ?? { code: 'domain_not_in_account', message: 'The report names no policy domain.' }
    return { ok: false, reason }
  }
  return { ...first, reportId: report.reportId, reporter: report.organizationName, waiting }
}

export type StoredTlsReportParts =
  | { ok: false; reason: QuarantineReason }
  | (StoredReport & {
      ok: true
      reportId: string
      reporter: string
      /** Why a part of the report was not stored yet: its domain waits for verification. */
      waiting: QuarantineReason | null
    })

/** A report's policies by policy domain, in the report's order. */
function policiesByDomain(policies: TlsRptPolicyResult[]): Map<string, TlsRptPolicyResult[]> {
  const byDomain = new Map<string, TlsRptPolicyResult[]>()
  for (const policy of policies) {
    const same = byDomain.get(policy.policyDomain)
    if (same === undefined) byDomain.set(policy.policyDomain, [policy])
    else same.push(policy)
  }
  return byDomain
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
