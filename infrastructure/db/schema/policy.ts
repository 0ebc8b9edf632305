import { sql } from 'drizzle-orm'
import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'
import { domains } from './domains.ts'

// DMARC policy progression (issue #6): every change of a hosted DMARC policy (an advance by the
// engine, a rollback, an edit through the API) and the pending proposals of `assisted` domains.
// The records themselves live in hosted_records (schema/spf.ts, kind 'dmarc'); a row here keeps
// the record before and after, so the history reads without the audit log and a rollback knows
// what it returns to. docs/policy-progression.md.
export const policyChanges = pgTable(
  'policy_changes',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    /** advance (a step up), rollback (back to where a change started), edit (a PUT that changed p or pct). */
    kind: text({ enum: ['advance', 'rollback', 'edit'] }).notNull(),
    /** proposed (waiting for approval), applied, withdrawn (no longer held when re-evaluated). */
    status: text({ enum: ['proposed', 'applied', 'withdrawn'] }).notNull(),
    fromPolicy: text().notNull(),
    /** pct as written in the record; null when absent. */
    fromPct: integer(),
    toPolicy: text().notNull(),
    toPct: integer(),
    fromRecord: text().notNull(),
    toRecord: text().notNull(),
    reason: text().notNull(),
    /** `system` (the engine) or `user:<id>` (an approval, a rollback, an edit). */
    actor: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    appliedAt: timestamp({ withTimezone: true }),
    /** Set on an applied change when a later rollback returned the policy to its starting point. */
    rolledBackAt: timestamp({ withTimezone: true }),
  },
  (t) => [
    index().on(t.domainId, t.createdAt),
    // At most one proposal waits per domain: a new one withdraws the old in the same transaction.
    uniqueIndex('policy_changes_one_proposal_key').on(t.domainId).where(sql`${t.status} = 'proposed'`),
  ],
)
