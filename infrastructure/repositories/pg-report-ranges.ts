import { sql } from 'drizzle-orm'
import type { Period } from '../../domain/reports/period.ts'

// Which aggregate reports belong to a period: the report list, the summaries' reporters and the
// monthly build of their counts (pg-monthly-rollups.ts) read them the same way.

/**
 * How long before a period a report overlapping it may begin. The bound keeps each read of the
 * (domain, begin) index to the period: without it, the last 30 days of a domain with a year of
 * history read the whole year's reports. Reporters send daily ranges (RFC 7489 §7.2: `ri` defaults
 * to a day; weekly ones are rare): a report whose range begins more than this before the period's
 * first day is not counted in it (docs/api.md "DMARC reports and periods").
 */
export const REPORT_RANGE_MARGIN_DAYS = 31

/** Reports (alias `a`) overlapping the period; see REPORT_RANGE_MARGIN_DAYS. */
export const overlapping = (period: Period) =>
  sql`a.begin_at >= (${period.from}::date - ${REPORT_RANGE_MARGIN_DAYS}::int) and a.begin_at < (${period.to}::date + 1)
    and a.end_at >= ${period.from}::date`

/**
 * The reports of the domain, or of every domain of the account (through `domains`, so that each
 * domain's part is a range of the (domain, begin) index, which covers what these reads need:
 * migration 0013).
 */
export const reportsOf = (accountId: string, domainId: number | null) =>
  domainId === null
    ? sql`aggregate_reports a join domains d on d.id = a.domain_id and d.account_id = a.account_id
        where d.account_id = ${accountId}`
    : sql`aggregate_reports a join domains d on d.id = a.domain_id
        where a.account_id = ${accountId} and a.domain_id = ${domainId}`
