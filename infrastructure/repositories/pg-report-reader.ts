import { type SQL, sql } from 'drizzle-orm'
import type { Summary } from '../../domain/reports/aggregate-reads.ts'
import type { Period } from '../../domain/reports/period.ts'
import { offsetOf, type PageRequest } from '../../domain/shared/pagination.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { overlapping, reportsOf } from './pg-report-ranges.ts'
import { builtMonths, failingSourcesQuery, reportersQuery } from './pg-summary-parts.ts'

// The read side of reports. Summaries and the overview read the daily rollups only, never raw
// records; every query is scoped by account (and by the domain's account for domain views).

const num = (value: unknown) => Number(value ?? 0)

const rate = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10000) / 100)

/**
 * Runs one read with PostgreSQL's parallel query off. The top failing sources aggregate ~100,000
 * index entries for an account's month; on two cores the parallel plan (workers started, partial
 * aggregates merged) took 140 ms at the median, the serial one 45 ms (bench:ingest, 10 M records):
 * the workers compete with the very processes they would help. SET LOCAL ends with the transaction.
 */
async function withoutParallelWorkers(db: Db, query: SQL) {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local max_parallel_workers_per_gather = 0`)
    return tx.execute(query)
  })
}

export function pgReportReader(db: Db) {
  const scope = (accountId: string, domainId: number | null) =>
    domainId === null
      ? sql`r.account_id = ${accountId}`
      : sql`r.account_id = ${accountId} and r.domain_id = ${domainId}`

  return {
    async domainId(accountId: string, name: string): Promise<number | null> {
      const rows = rowsOf<{ id: string }>(
        await db.execute(sql`select id from domains where account_id = ${accountId} and name = ${name}`),
      )
      return rows[0] === undefined ? null : Number(rows[0].id)
    },

    /**
     * Aggregate reports overlapping the period, newest first, with their domain's name.
     * `domainId: null` reads every domain of the account (the dashboard's "All domains"); the
     * API always passes its route's domain.
     */
    async listReports(accountId: string, domainId: number | null, period: Period, page: PageRequest) {
      const from = sql`${reportsOf(accountId, domainId)} and ${overlapping(period)}`
      const [rows, totals] = await Promise.all([
        db.execute(sql`select a.id, d.name as domain, a.reporter_org, a.reporter_email, a.report_id, a.policy_domain,
            a.begin_at, a.end_at, a.record_count, a.message_count, a.duplicates_seen, a.variant, a.received_at
          from ${from}
          order by a.begin_at desc, a.id desc
          limit ${page.perPage} offset ${offsetOf(page)}`),
        db.execute(sql`select count(*)::int as n from ${from}`),
      ])
      return { items: rowsOf<Record<string, unknown>>(rows), total: num(rowsOf<{ n: number }>(totals)[0]?.n) }
    },

    /** One report of the account (of that domain, unless `domainId` is null) and a page of its records. */
    async report(accountId: string, domainId: number | null, id: number, page: PageRequest) {
      const reports = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select r.id, d.name as domain, r.reporter_org, r.reporter_email, r.report_id,
            r.policy_domain, r.begin_at, r.end_at, r.record_count, r.message_count, r.duplicates_seen, r.variant,
            r.policy, r.errors, r.received_at
          from aggregate_reports r join domains d on d.id = r.domain_id
          where ${scope(accountId, domainId)} and r.id = ${id}`),
      )
      if (reports[0] === undefined) return null
      const records = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select host(source_ip) as source_ip, count, disposition, dkim_evaluated, spf_evaluated,
            reasons, header_from, envelope_from, envelope_to, dkim, spf, dkim_aligned, spf_aligned, dmarc_pass
          from aggregate_records where report_id = ${id} and account_id = ${accountId}
            -- Every record of a report is stored under the report's first day (reportDay, UTC), so
            -- this reads the one monthly partition that holds them (run-time partition pruning).
            and day = (select (begin_at at time zone 'UTC')::date from aggregate_reports
              where id = ${id} and account_id = ${accountId})
          order by count desc, id limit ${page.perPage} offset ${offsetOf(page)}`),
      )
      return { report: reports[0], records, total: num(reports[0].record_count) }
    },

    async summary(accountId: string, domainId: number | null, period: Period): Promise<Summary> {
      const totalsWhere = sql`${scope(accountId, domainId)} and r.day between ${period.from}::date and ${period.to}::date`
      const [daily, dispositions, [failing, reporters]] = await Promise.all([
        db.execute(sql`select to_char(r.day, 'YYYY-MM-DD') as day, sum(r.messages) as messages,
            sum(r.dmarc_pass) as dmarc_pass, sum(r.dkim_aligned) as dkim_aligned, sum(r.spf_aligned) as spf_aligned
          from daily_domain_totals r where ${totalsWhere} group by r.day order by r.day`),
        db.execute(sql`select d.disposition, d.messages from (
            select 'none' as disposition, sum(r.disposition_none) as messages from daily_domain_totals r where ${totalsWhere}
            union all select 'quarantine', sum(r.disposition_quarantine) from daily_domain_totals r where ${totalsWhere}
            union all select 'reject', sum(r.disposition_reject) from daily_domain_totals r where ${totalsWhere}
            union all select 'other', sum(r.disposition_other) from daily_domain_totals r where ${totalsWhere}
          ) d where d.messages > 0 order by d.messages desc, d.disposition`),
        // Failing sources and reporters: closed months from the monthly rollups when built, the
        // rest as before (pg-summary-parts.ts).
        builtMonths(db, accountId, period).then((months) =>
          Promise.all([
            withoutParallelWorkers(db, failingSourcesQuery(accountId, domainId, period, months)),
            db.execute(reportersQuery(accountId, domainId, period, months)),
          ]),
        ),
      ])
      const days = rowsOf<Record<string, unknown>>(daily).map((d) => ({
        day: String(d.day),
        messages: num(d.messages),
        dmarc_pass: num(d.dmarc_pass),
        dkim_aligned: num(d.dkim_aligned),
        spf_aligned: num(d.spf_aligned),
      }))
      const sum = (key: 'messages' | 'dmarc_pass' | 'dkim_aligned' | 'spf_aligned') =>
        days.reduce((s, d) => s + d[key], 0)
      const reporterRows = rowsOf<Record<string, unknown>>(reporters)
      const totals = {
        messages: sum('messages'),
        dmarc_pass: sum('dmarc_pass'),
        dkim_aligned: sum('dkim_aligned'),
        spf_aligned: sum('spf_aligned'),
        reports: num(reporterRows[0]?.all_reports),
      }
      return {
        totals,
        rates: {
          dmarc_pass: rate(totals.dmarc_pass, totals.messages),
          dkim_aligned: rate(totals.dkim_aligned, totals.messages),
          spf_aligned: rate(totals.spf_aligned, totals.messages),
        },
        daily: days,
        dispositions: rowsOf<Record<string, unknown>>(dispositions).map((d) => ({
          disposition: String(d.disposition),
          messages: num(d.messages),
        })),
        top_failing_sources: rowsOf<Record<string, unknown>>(failing).map((f) => ({
          source_ip: String(f.source_ip),
          ptr: (f.ptr as string | null) ?? null,
          failing: num(f.failing),
        })),
        reporters: reporterRows.map((r) => ({
          org_name: String(r.org_name),
          reports: num(r.reports),
          messages: num(r.messages),
        })),
      }
    },

    /**
     * When the most recent aggregate report of the domain (of every domain of the account when
     * `domainId` is null) begins, for a period that holds none (docs/api.md `latest_report_at`);
     * null when there is no report at all. Read through the (domain, begin) index, one probe per
     * domain.
     */
    async latestReportAt(accountId: string, domainId: number | null): Promise<Date | null> {
      const rows = rowsOf<{ at: unknown }>(
        await db.execute(
          domainId === null
            ? sql`select max(l.begin_at) as at from domains d cross join lateral (
                  select a.begin_at from aggregate_reports a where a.domain_id = d.id and a.account_id = d.account_id
                  order by a.begin_at desc limit 1) l
                where d.account_id = ${accountId}`
            : sql`select max(begin_at) as at from aggregate_reports
                where account_id = ${accountId} and domain_id = ${domainId}`,
        ),
      )
      const at = rows[0]?.at
      return at === null || at === undefined ? null : at instanceof Date ? at : new Date(String(at))
    },

    /** DKIM selectors seen signing the domain's (or a subdomain's) mail in its reports, most used first. */
    async learnedSelectors(accountId: string, name: string): Promise<string[]> {
      const rows = rowsOf<{ selector: string }>(
        await db.execute(sql`select s.selector from dkim_selectors_seen s join domains d on d.id = s.domain_id
          where d.account_id = ${accountId} and d.name = ${name}
            and (s.signing_domain = d.name or s.signing_domain like '%.' || d.name)
          group by s.selector order by sum(s.messages) desc limit 20`),
      )
      return rows.map((r) => r.selector)
    },

    async policyDistribution(accountId: string) {
      const rows = rowsOf<{ policy: string | null; domains: number }>(
        await db.execute(sql`select coalesce(dmarc_policy, 'unchecked') as policy, count(*)::int as domains
          from domains where account_id = ${accountId} group by 1 order by 2 desc`),
      )
      return rows.map((r) => ({ policy: String(r.policy), domains: num(r.domains) }))
    },
  }
}
