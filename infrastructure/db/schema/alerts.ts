import { sql } from 'drizzle-orm'
import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'
import { domains } from './domains.ts'

// Alerts (issue #6, docs/alerts.md): one open alert per (account, domain, type, subject), kept by a
// partial unique index, so two evaluations racing cannot open the same alert twice. Account-wide
// alerts (webhook delivery failing, ingest quarantine growing) have no domain.
export const alerts = pgTable(
  'alerts',
  {
    id: uuid().primaryKey().defaultRandom(),
    /**
     * The alert's public id (`alert_id` in the API, webhooks, mails and dashboard addresses): an
     * integer, as the API this service was commissioned from gives it (docs/alerts.md). Numbered
     * across accounts; every read is scoped to the account, so a number of another account's
     * alert answers as a missing one. `id` stays the key that other tables reference.
     */
    number: bigint({ mode: 'number' }).generatedAlwaysAsIdentity().notNull().unique(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' }).references(() => domains.id, { onDelete: 'cascade' }),
    type: text().notNull(),
    /** '' when the rule raises one alert per domain; else e.g. a selector or a source. */
    subject: text().notNull().default(''),
    severity: text().notNull(),
    title: text().notNull(),
    details: jsonb().notNull(),
    status: text().notNull().default('open'),
    /** `condition_cleared` (resolved by the service) or `user`. */
    resolution: text(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    updatedAt: timestamp({ withTimezone: true }).notNull(),
    resolvedAt: timestamp({ withTimezone: true }),
  },
  (t) => [
    uniqueIndex('alerts_one_open_key')
      .on(t.accountId, sql`coalesce(${t.domainId}, 0)`, t.type, t.subject)
      .where(sql`${t.status} = 'open'`),
    index().on(t.accountId, t.createdAt),
  ],
)
