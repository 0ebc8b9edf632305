import { findAccountDomain } from '../domains/account-domain.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, ok, type Result } from '../shared/result.ts'
import type {
  AggregateReportDetail,
  AggregateReportReads,
  AggregateReportRow,
  PolicyShare,
  ReportDomainIds,
  Summary,
} from './aggregate-reads.ts'
import { type Period, periodOf } from './period.ts'

// The aggregate report reads of the API (docs/api.md "DMARC reports and periods"). A domain named
// in the request is the caller's or 403 `domain_not_found`, found before the period is read, so a
// foreign domain with a bad period is still a 403. A period that holds no report says where the
// most recent one begins (`latestReportAt`; null when there is none at all).

/** The period as a request gives it: `days`, or `from`/`to` (domain/reports/period.ts). */
export interface PeriodInput {
  days?: number
  from?: string
  to?: string
}

/** Set only when the period holds no report: when the most recent report begins (null: none). */
export interface LatestWhenEmpty {
  latestReportAt?: Date | null
}

/** The id of the caller's domain called `name` (403 `domain_not_found` for any other name). */
export function reportDomainId(
  deps: { reports: ReportDomainIds },
  input: { accountId: string; domain: string },
): Promise<Result<number>> {
  return findAccountDomain((name) => deps.reports.domainId(input.accountId, name), input.domain)
}

/** `latestReportAt` of an empty period (the domain's, or the account's for null); nothing otherwise. */
export async function latestWhenEmpty(
  deps: { reports: Pick<AggregateReportReads, 'latestReportAt'> },
  input: { accountId: string; domainId: number | null; empty: boolean },
): Promise<LatestWhenEmpty> {
  if (!input.empty) return {}
  return { latestReportAt: await deps.reports.latestReportAt(input.accountId, input.domainId) }
}

/** A domain's reports overlapping the period, newest first. */
export async function listDomainReports(
  deps: {
    reports: Pick<AggregateReportReads, 'domainId' | 'listReports' | 'latestReportAt'>
    now: () => Date
  },
  input: { accountId: string; domain: string; period: PeriodInput; page: PageRequest },
): Promise<Result<Page<AggregateReportRow> & LatestWhenEmpty>> {
  const domainId = await reportDomainId(deps, input)
  if (!domainId.ok) return domainId
  const period = periodOf(input.period, deps.now())
  if (!period.ok) return period
  const found = await deps.reports.listReports(input.accountId, domainId.value, period.value, input.page)
  const latest = await latestWhenEmpty(deps, {
    accountId: input.accountId,
    domainId: domainId.value,
    empty: found.total === 0,
  })
  return ok({ ...found, ...latest })
}

/** One report of the domain with a page of its records; another domain's or account's is `not_found`. */
export async function getDomainReport(
  deps: { reports: Pick<AggregateReportReads, 'domainId' | 'report'> },
  input: { accountId: string; domain: string; id: number; page: PageRequest },
): Promise<Result<AggregateReportDetail>> {
  const domainId = await reportDomainId(deps, input)
  if (!domainId.ok) return domainId
  const found = await deps.reports.report(input.accountId, domainId.value, input.id, input.page)
  return found === null ? fail({ code: 'not_found', resource: 'report' }) : ok(found)
}

export interface PeriodSummary extends LatestWhenEmpty {
  period: Period
  summary: Summary
}

/** The account's figures over the period, every domain together, with its domains' DMARC policies. */
export async function reportOverview(
  deps: {
    reports: Pick<AggregateReportReads, 'summary' | 'policyDistribution' | 'latestReportAt'>
    now: () => Date
  },
  input: { accountId: string; period: PeriodInput },
): Promise<Result<PeriodSummary & { policies: PolicyShare[] }>> {
  const period = periodOf(input.period, deps.now())
  if (!period.ok) return period
  const [summary, policies] = await Promise.all([
    deps.reports.summary(input.accountId, null, period.value),
    deps.reports.policyDistribution(input.accountId),
  ])
  const latest = await latestWhenEmpty(deps, {
    accountId: input.accountId,
    domainId: null,
    empty: summary.totals.reports === 0,
  })
  return ok({ period: period.value, summary, policies, ...latest })
}

/** A domain's figures over the period. */
export async function domainReportSummary(
  deps: { reports: Pick<AggregateReportReads, 'domainId' | 'summary' | 'latestReportAt'>; now: () => Date },
  input: { accountId: string; domain: string; period: PeriodInput },
): Promise<Result<PeriodSummary>> {
  const domainId = await reportDomainId(deps, input)
  if (!domainId.ok) return domainId
  const period = periodOf(input.period, deps.now())
  if (!period.ok) return period
  const summary = await deps.reports.summary(input.accountId, domainId.value, period.value)
  const latest = await latestWhenEmpty(deps, {
    accountId: input.accountId,
    domainId: domainId.value,
    empty: summary.totals.reports === 0,
  })
  return ok({ period: period.value, summary, ...latest })
}
