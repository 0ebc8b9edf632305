import { bigint, boolean, inet, pgTable, text, uuid } from 'drizzle-orm/pg-core'

// A large report's per-source rollup rows, written with the report in its transaction and merged
// into daily_rollups and weekly_failing_sources right after it commits (aggregate-report-merge.ts;
// docs/ingestion.md "The per-source rollup merged after the commit"). The rows are gone once
// merged, so the table holds only reports being stored or merged: no key and no index, which
// would cost the COPY of ~100,000 rows, and the merge finds a report's rows by a scan of a table
// that is nearly always empty. No foreign key either (a check per copied row): the merge inserts
// nothing for a report deleted meanwhile, and deletes its rows all the same.
export const rollupPending = pgTable('rollup_pending', {
  reportId: bigint({ mode: 'number' }).notNull(),
  // Tenant data like every table a report writes (tests/infrastructure/db/tenant-tables.test.ts).
  accountId: uuid().notNull(),
  sourceIp: inet().notNull(),
  disposition: text().notNull(),
  dkimAligned: boolean().notNull(),
  spfAligned: boolean().notNull(),
  messages: bigint({ mode: 'number' }).notNull(),
  spfPass: bigint({ mode: 'number' }).notNull(),
  dkimPass: bigint({ mode: 'number' }).notNull(),
  forwarded: bigint({ mode: 'number' }).notNull(),
  /** Space-separated evidence domains, split into daily_rollups' arrays when merged. */
  dkimDomains: text().notNull(),
  spfDomains: text().notNull(),
})
