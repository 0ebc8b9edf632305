import type { Page, PageRequest } from '../shared/pagination.ts'
import type { FailureTlsStore } from './store-failure-tls.ts'
import type { TlsRptReport } from './tls-rpt.ts'

// What the API and the dashboard read of failure (forensic) and TLS-RPT reports (implemented by
// infrastructure/repositories/pg-forensic-tls-store.ts, with the writes of store-failure-tls.ts).
// Every read takes the account and filters by it.

export interface ForensicFilter {
  domainId?: number
  /** Arrived at or after. */
  since?: Date | undefined
  /** Arrived before (the first millisecond past the `until` asked for: domain/reports/time-filters.ts). */
  until?: Date | undefined
  sourceIp?: string | undefined
}

/** A stored TLS-RPT report: its columns, and the report itself as insertTls wrote it. */
export interface StoredTlsReport {
  id: number
  domain: string
  organization: string
  report_id: string
  begin_at: string
  end_at: string
  success_count: number
  failure_count: number
  report: TlsRptReport
  created_at: string
  /** When its message arrived (the time of storage for TLS-RPT posted over HTTPS). */
  received_at: string
}

/** TLS-RPT for a domain over a period: totals, per-day counts, the failure types seen, the reports. */
export interface TlsSummary {
  totals: { successful_sessions: number; failed_sessions: number; reports: number }
  daily: { day: string; successful_sessions: number; failed_sessions: number }[]
  failure_types: { result_type: string; sessions: number }[]
  reports: {
    id: number
    organization: string
    report_id: string
    begin: string
    end: string
    successful_sessions: number
    failed_sessions: number
  }[]
}

export interface FailureTlsReads {
  /** Failure reports as stored rows (the route presents them), newest first. */
  listForensic(
    accountId: string,
    filter: ForensicFilter,
    page: PageRequest,
  ): Promise<Page<Record<string, unknown>>>
  forensic(accountId: string, id: number): Promise<Record<string, unknown> | null>
  tlsReport(accountId: string, id: number): Promise<StoredTlsReport | null>
  tlsSummary(accountId: string, domainId: number, from: string, to: string): Promise<TlsSummary>
}

export interface ForensicTlsStore extends FailureTlsStore, FailureTlsReads {}
