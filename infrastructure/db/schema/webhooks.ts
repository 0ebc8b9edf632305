import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'

// Webhooks (issue #6, docs/webhooks.md): one URL and secret per account (the secret sealed with the
// secret box, never stored in clear), one delivery per outbox event, and every attempt logged.
export const webhookSettings = pgTable('webhook_settings', {
  accountId: uuid()
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  url: text(),
  /** `whsec_...`, sealed (infrastructure/crypto/secret-box.ts). */
  secretSealed: text().notNull(),
  updatedAt: timestamp({ withTimezone: true }).notNull(),
})

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** The outbox event id: stable across retries and redeliveries (X-Webhook-Id). */
    id: uuid().primaryKey(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    event: text().notNull(),
    data: jsonb().notNull(),
    url: text().notNull(),
    /** pending, delivered or failed. */
    status: text().notNull(),
    attempts: integer().notNull().default(0),
    firstFailureAt: timestamp({ withTimezone: true }),
    nextAttemptAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    updatedAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [
    index().on(t.accountId, t.createdAt),
    // The webhook_delivery_failing facts (the last delivered time, the failures since) and the
    // nightly retention's scan of finished deliveries (pg-delivery-log-retention.ts) read by these.
    index().on(t.accountId, t.status, t.updatedAt),
  ],
)

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid().primaryKey().defaultRandom(),
    deliveryId: uuid()
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer().notNull(),
    at: timestamp({ withTimezone: true }).notNull(),
    /** delivered, retry or give_up, and why. */
    verdict: text().notNull(),
    outcome: text().notNull(),
    status: integer(),
    latencyMs: integer().notNull(),
    responseSnippet: text(),
  },
  (t) => [index().on(t.deliveryId, t.attempt)],
)
