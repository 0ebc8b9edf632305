import { sql } from 'drizzle-orm'
import {
  bigserial,
  date,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'
import { alerts } from './alerts.ts'

// Notification mail (issue #21, docs/notifications.md "Mail"): who must not be mailed, the
// unsubscribe tokens handed out in List-Unsubscribe (RFC 8058), the alert changes still to be
// mailed, and the digests already enqueued (one per account and period, never two).

/**
 * An address not to mail: `kind` alerts or digest after a one-click unsubscribe of that kind;
 * `all` after a permanent bounce (a 5xx answer to RCPT TO).
 */
export const mailSuppressions = pgTable(
  'mail_suppressions',
  {
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** Lower-cased address. */
    recipient: text().notNull(),
    /** alerts, digest or all. */
    kind: text().notNull(),
    /** unsubscribed or bounced. */
    reason: text().notNull(),
    /** The server's answer, for a bounce. */
    detail: text(),
    at: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.recipient, t.kind] })],
)

/** A List-Unsubscribe token, stored as its SHA-256: the token itself is only in the mail. */
export const mailUnsubscribeTokens = pgTable(
  'mail_unsubscribe_tokens',
  {
    tokenHash: text().primaryKey(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    recipient: text().notNull(),
    kind: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index().on(t.createdAt)],
)

/**
 * An alert opened or resolved, waiting for its account's next alert email. The relay writes it with
 * the event (pg-webhook-relay.ts); the alert-mail job sets `mailed_at` in the transaction that
 * enqueues the mails, so an alert change is mailed once and never lost.
 */
export const alertMailQueue = pgTable(
  'alert_mail_queue',
  {
    id: bigserial({ mode: 'number' }).primaryKey(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    alertId: uuid()
      .notNull()
      .references(() => alerts.id, { onDelete: 'cascade' }),
    /** created or resolved. */
    change: text().notNull(),
    queuedAt: timestamp({ withTimezone: true }).notNull(),
    mailedAt: timestamp({ withTimezone: true }),
  },
  (t) => [
    uniqueIndex().on(t.alertId, t.change),
    index('alert_mail_queue_waiting').on(t.accountId).where(sql`${t.mailedAt} is null`),
  ],
)

/** A digest enqueued: the key makes a period's digest one job, whatever the scheduler does. */
export const digestRuns = pgTable(
  'digest_runs',
  {
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** daily or weekly. */
    frequency: text().notNull(),
    /** The local date the digest is for (its 08:00). */
    localDate: date().notNull(),
    enqueuedAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.frequency, t.localDate] })],
)
