import {
  bigint,
  boolean,
  date,
  inet,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'

// Coarser rollups for closed months (issue #17, docs/ingestion.md "A year of history"): a year's
// overview reads ~12 months plus the edge weeks and days, instead of ~52 weeks of failing sources
// and every report row. Built by the nightly maintenance job (pg-monthly-rollups.ts) for months
// that ended at least a day before, never by the report writer. A month's rows are used only while
// its build row in monthly_rollup_builds is not stale; a report stored later for that month marks it
// stale (aggregate-report-sql.ts), the summaries then read its weeks and days again until the next
// build. Like the daily rollups they summarize, they carry no foreign keys (written in bulk) and are
// kept by retention.

/** Failing volume (neither DKIM nor SPF aligned) per account, month, domain and source IP. */
export const monthlyFailingSources = pgTable(
  'monthly_failing_sources',
  {
    accountId: uuid().notNull(),
    /** The first day of the month (UTC). */
    month: date({ mode: 'string' }).notNull(),
    domainId: bigint({ mode: 'number' }).notNull(),
    sourceIp: inet().notNull(),
    failing: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.month, t.domainId, t.sourceIp] })],
)

/**
 * The reports whose range begins in the month (UTC), per domain and reporter, as the summaries'
 * `reporters` and `totals.reports` count them. `ends_on` is the month's first day, or the UTC day
 * the range ends when that is earlier (a range that ends before it begins: the parser refuses one now,
 * but reports stored before may hold one), so
 * a period keeps the rule that a report overlapping it ends on or after its first day.
 */
export const monthlyReporterCounts = pgTable(
  'monthly_reporter_counts',
  {
    accountId: uuid().notNull(),
    month: date({ mode: 'string' }).notNull(),
    domainId: bigint({ mode: 'number' }).notNull(),
    reporterOrg: text().notNull(),
    endsOn: date({ mode: 'string' }).notNull(),
    reports: integer().notNull(),
    messages: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({
      name: 'monthly_reporter_counts_pkey',
      columns: [t.accountId, t.month, t.domainId, t.reporterOrg, t.endsOn],
    }),
  ],
)

/**
 * One row per account and closed month once built (or once a report arrived for it after it
 * closed). The summaries use a month's monthly rows only when `stale` is false.
 */
export const monthlyRollupBuilds = pgTable(
  'monthly_rollup_builds',
  {
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    month: date({ mode: 'string' }).notNull(),
    /** When the rows were last built; null when a late report came before any build. */
    builtAt: timestamp({ withTimezone: true }),
    stale: boolean().notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.month] })],
)
