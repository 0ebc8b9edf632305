import { type SQL, sql } from 'drizzle-orm'
import {
  extendedBack,
  outsideMonths,
  type Period,
  splitWeeks,
  wholeMonths,
} from '../../domain/reports/period.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { REPORT_RANGE_MARGIN_DAYS, reportsOf } from './pg-report-ranges.ts'

// The two parts of a summary whose cost grows with the period (docs/ingestion.md "A year of
// history"): the top failing sources and the reporters. A period is read as the closed months the
// nightly build has rolled up (pg-monthly-rollups.ts), and, outside them, whole ISO weeks and edge
// days, as before: the figures are the same whichever way a period is cut
// (tests/infrastructure/reports/monthly-rollups.test.ts).

const scope = (alias: string, accountId: string, domainId: number | null) => {
  const a = sql.raw(alias)
  return domainId === null
    ? sql`${a}.account_id = ${accountId}`
    : sql`${a}.account_id = ${accountId} and ${a}.domain_id = ${domainId}`
}

const monthList = (months: readonly string[]) =>
  sql.join(
    months.map((m) => sql`${m}::date`),
    sql`, `,
  )

/**
 * The whole months of the period whose monthly rows may be read for the account: built, and not
 * marked stale by a report stored for the month since (aggregate-report-sql.ts).
 */
export async function builtMonths(db: Db, accountId: string, period: Period): Promise<string[]> {
  const months = wholeMonths(period)
  if (months.length === 0) return []
  const rows = rowsOf<{ month: string }>(
    await db.execute(sql`select to_char(month, 'YYYY-MM-DD') as month from monthly_rollup_builds
      where account_id = ${accountId} and month between ${months[0]}::date and ${months.at(-1)}::date and not stale
      order by month`),
  )
  return rows.map((r) => r.month)
}

/**
 * Top 10 failing sources (neither DKIM nor SPF aligned) with their PTR: the built months from the
 * monthly table, the rest of the period as whole weeks from the weekly table and edge days from the
 * daily rollups' partial index. Ties go by address, so the answer does not depend on the cut.
 */
export function failingSourcesQuery(
  accountId: string,
  domainId: number | null,
  period: Period,
  months: readonly string[],
): SQL {
  const parts: SQL[] = []
  if (months.length > 0)
    parts.push(sql`select m.source_ip, m.failing from monthly_failing_sources m
      where ${scope('m', accountId, domainId)} and m.month in (${monthList(months)})`)
  for (const range of outsideMonths(period, months)) {
    const split = splitWeeks(range)
    if (split.weeks !== null)
      parts.push(sql`select w.source_ip, w.failing from weekly_failing_sources w
        where ${scope('w', accountId, domainId)} and w.week between ${split.weeks.first}::date and ${split.weeks.last}::date`)
    for (const edge of split.edges)
      parts.push(sql`select r.source_ip, r.messages as failing from daily_rollups r
        where ${scope('r', accountId, domainId)} and r.day between ${edge.from}::date and ${edge.to}::date
          and not r.dkim_aligned and not r.spf_aligned`)
  }
  return sql`with parts as (${sql.join(parts, sql` union all `)}), top as (
      select source_ip, sum(failing) as failing from parts group by source_ip order by failing desc, source_ip limit 10)
    select host(top.source_ip) as source_ip, s.ptr, top.failing
    from top left join source_ips s on s.ip = top.source_ip order by top.failing desc, top.source_ip`
}

/**
 * Reporters (top 10 by messages, ties by name) and, on every row, the count of all reports
 * overlapping the period (`all_reports`, totals.reports): a report of zero records included, as
 * the report list counts them. Built months from the monthly counts; the rest of the period, and
 * the REPORT_RANGE_MARGIN_DAYS before it, from the (domain, begin) index.
 */
export function reportersQuery(
  accountId: string,
  domainId: number | null,
  period: Period,
  months: readonly string[],
): SQL {
  const parts: SQL[] = []
  if (months.length > 0)
    parts.push(sql`select m.reporter_org, m.reports::bigint, m.messages::numeric from monthly_reporter_counts m
      where ${scope('m', accountId, domainId)} and m.month in (${monthList(months)}) and m.ends_on >= ${period.from}::date`)
  for (const range of outsideMonths(extendedBack(period, REPORT_RANGE_MARGIN_DAYS), months))
    parts.push(sql`select a.reporter_org, count(*), sum(a.message_count) from ${reportsOf(accountId, domainId)}
      and a.begin_at >= ${range.from}::date and a.begin_at < (${range.to}::date + 1) and a.end_at >= ${period.from}::date
      group by a.reporter_org`)
  return sql`select p.org_name, sum(p.reports)::int as reports, sum(p.messages) as messages,
      (sum(sum(p.reports)) over ())::int as all_reports
    from (${sql.join(parts, sql` union all `)}) p(org_name, reports, messages)
    group by p.org_name order by messages desc, p.org_name limit 10`
}
