import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'

// Notification settings and chat deliveries (issue #21, docs/notifications.md).

/**
 * One row per account that saved its settings (none: the defaults of domain/notifications/settings.ts).
 * The mail and digest settings are one JSON document; the chat URLs carry a token, so they are
 * sealed with the secret box like webhook secrets (infrastructure/crypto/secret-box.ts).
 */
export const notificationSettings = pgTable('notification_settings', {
  accountId: uuid()
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  /** `{alertEmail, digest, slack: {minSeverity}, teams: {minSeverity}}` without the URLs. */
  settings: jsonb().notNull(),
  slackUrlSealed: text(),
  teamsUrlSealed: text(),
  updatedAt: timestamp({ withTimezone: true }).notNull(),
})

/** One message to a chat channel (an alert created or resolved, or a test) and how it went. */
export const notificationDeliveries = pgTable(
  'notification_deliveries',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** slack or teams. */
    channel: text().notNull(),
    /** alert.created, alert.resolved or test. */
    event: text().notNull(),
    /** The outbox event (null for a test): one message per event and channel, whatever re-reads it. */
    eventId: uuid(),
    data: jsonb().notNull(),
    /** pending, delivered or failed. */
    status: text().notNull(),
    attempts: integer().notNull().default(0),
    /** The last failed attempt's outcome (HTTP status or network error), kept once delivered. */
    error: text(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    updatedAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [
    index().on(t.accountId, t.channel, t.createdAt),
    uniqueIndex('notification_deliveries_event_channel_idx').on(t.eventId, t.channel),
  ],
)
