import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../db/database.ts'

// The nightly build of the monthly rollups (schema/monthly-rollups.ts; docs/ingestion.md "A year of
// history"), run by the maintenance job. Every month of an account that ended at least a day ago
// and has no current build is built from the daily rollups and the report rows, each month in its
// own short transaction.
//
// Reports that arrive for a month after it ended (late reports) are the report writer's part: a
// report whose month is before the current one (by the database's clock) marks that month stale in
// the statement that stores it (aggregate-report-sql.ts), and the summaries do not read a stale
// month's monthly rows until the next build. The build takes the month's row in
// monthly_rollup_builds first, before it reads anything: a writer that stores a report for the
// month meanwhile waits for that row, and marks the month stale once the build commits; a writer
// that committed before is in what the build reads. A month is built one day after it ended, so a
// report that began before the month was over (and so did not mark it) had a day to commit.

/** Months that ended at least a day ago (UTC) are closed for the build. */
const CLOSED_BEFORE = sql`date_trunc('month', (now() at time zone 'UTC') - interval '1 day')::date`

/** Builds every closed month of every account that has no current build; returns how many. */
export async function buildMonthlyRollups(db: Db): Promise<{ months: number }> {
  const due = rowsOf<{ account_id: string; month: string }>(
    await db.execute(sql`select c.account_id, to_char(c.month, 'YYYY-MM-DD') as month from (
        select distinct t.account_id, date_trunc('month', t.day::timestamp)::date as month
        from daily_domain_totals t where t.day < ${CLOSED_BEFORE}) c
      left join monthly_rollup_builds b on b.account_id = c.account_id and b.month = c.month
      where b.stale is not false
      order by c.account_id, c.month`),
  )
  for (const { account_id, month } of due) await buildMonth(db, account_id, month)
  return { months: due.length }
}

/** One account's month: its build row first (see above), then its rows replaced. */
export async function buildMonth(db: Db, accountId: string, month: string): Promise<void> {
  const next = sql`(${month}::date + interval '1 month')::date`
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into monthly_rollup_builds (account_id, month, built_at, stale)
      values (${accountId}, ${month}::date, now(), false)
      on conflict (account_id, month) do update set built_at = now(), stale = false`)
    await tx.execute(
      sql`delete from monthly_failing_sources where account_id = ${accountId} and month = ${month}::date`,
    )
    await tx.execute(
      sql`delete from monthly_reporter_counts where account_id = ${accountId} and month = ${month}::date`,
    )
    // The same rows the weekly table sums (the writer adds both from one report's sources).
    await tx.execute(sql`insert into monthly_failing_sources (account_id, month, domain_id, source_ip, failing)
      select r.account_id, ${month}::date, r.domain_id, r.source_ip, sum(r.messages)
      from daily_rollups r
      where r.account_id = ${accountId} and r.day >= ${month}::date and r.day < ${next}
        and not r.dkim_aligned and not r.spf_aligned
      group by 1, 2, 3, 4
      order by 3, 4`)
    // Reports whose range begins in the month, bounded as the summaries bound them
    // (pg-report-ranges.ts); ends_on keeps a range that ends before the month apart. end_at::date
    // is the cast the summaries' `a.end_at >= from::date` makes (the session's zone, UTC).
    await tx.execute(sql`insert into monthly_reporter_counts
        (account_id, month, domain_id, reporter_org, ends_on, reports, messages)
      select d.account_id, ${month}::date, a.domain_id, a.reporter_org,
        least(${month}::date, a.end_at::date), count(*), sum(a.message_count)
      from aggregate_reports a join domains d on d.id = a.domain_id and d.account_id = a.account_id
      where d.account_id = ${accountId} and a.begin_at >= ${month}::date and a.begin_at < ${next}
      group by 1, 2, 3, 4, 5`)
  })
}
