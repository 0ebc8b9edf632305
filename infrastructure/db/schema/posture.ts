import { bigint, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'
import { domains } from './domains.ts'

// The history of posture checks: every check's findings are kept, so alert rules can compare a
// check with the one before it (record removed, lookups over 10, policy weakened).
export const domainChecks = pgTable(
  'domain_checks',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    checkedAt: timestamp({ withTimezone: true }).notNull(),
    grade: text().notNull(),
    // The API's status document (areas, issues, grade) and the raw findings it was computed from.
    posture: jsonb().notNull(),
    findings: jsonb().notNull(),
    // When the answer may be served from this row without re-checking (the smallest TTL seen).
    freshUntil: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index().on(t.domainId, t.checkedAt)],
)
