import type { Page, PageRequest } from '../shared/pagination.ts'
import type { Period } from './period.ts'

// What the API and the dashboard read of aggregate (RUA) reports (implemented by
// infrastructure/repositories/pg-report-reader.ts). Summaries read the daily rollups, never raw
// records. Every read takes the account and filters by it; `domainId: null` reads every domain of
// the account (the overview, the dashboard's "All domains").

/** A domain's report figures over a period (docs/api.md "DMARC reports and periods"). */
export interface Summary {
  totals: {
    messages: number
    dmarc_pass: number
    dkim_aligned: number
    spf_aligned: number
    reports: number
  }
  rates: { dmarc_pass: number | null; dkim_aligned: number | null; spf_aligned: number | null }
  daily: { day: string; messages: number; dmarc_pass: number; dkim_aligned: number; spf_aligned: number }[]
  dispositions: { disposition: string; messages: number }[]
  top_failing_sources: { source_ip: string; ptr: string | null; failing: number }[]
  reporters: { org_name: string; reports: number; messages: number }[]
}

/** A stored aggregate report as its row (the route and the pages present it), with its domain's name. */
export type AggregateReportRow = Record<string, unknown>

/** One report, its policy and errors included, and a page of its records (largest count first). */
export interface AggregateReportDetail {
  report: AggregateReportRow
  records: Record<string, unknown>[]
  /** The report's record count. */
  total: number
}

/** How many of the account's domains publish each DMARC policy (`unchecked`: not checked yet). */
export interface PolicyShare {
  policy: string
  domains: number
}

/** The id of the account's domain called `name` (already normalised); null for any other name. */
export interface ReportDomainIds {
  domainId(accountId: string, name: string): Promise<number | null>
}

export interface AggregateReportReads extends ReportDomainIds {
  /** Reports overlapping the period, newest first. */
  listReports(
    accountId: string,
    domainId: number | null,
    period: Period,
    page: PageRequest,
  ): Promise<Page<AggregateReportRow>>
  /** One report of the account (of that domain, unless `domainId` is null); null for any other id. */
  report(
    accountId: string,
    domainId: number | null,
    id: number,
    page: PageRequest,
  ): Promise<AggregateReportDetail | null>
  summary(accountId: string, domainId: number | null, period: Period): Promise<Summary>
  /** When the most recent report begins (docs/api.md `latest_report_at`); null when there is none. */
  latestReportAt(accountId: string, domainId: number | null): Promise<Date | null>
  policyDistribution(accountId: string): Promise<PolicyShare[]>
  /** DKIM selectors seen signing the domain's (or a subdomain's) mail, most used first. */
  learnedSelectors(accountId: string, name: string): Promise<string[]>
}
