import { sql } from 'drizzle-orm'
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'

// The outbox: an event is written in the same transaction as the change that caused it, so no event
// is lost and none is sent for a change that rolled back. Webhook delivery reads from here.
export const events = pgTable(
  'events',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    type: text().notNull(),
    data: jsonb().notNull(),
    occurredAt: timestamp({ withTimezone: true }).notNull(),
    /** Set when the relay turned the event into a webhook delivery (or found no webhook). */
    dispatchedAt: timestamp({ withTimezone: true }),
  },
  (t) => [
    index().on(t.accountId, t.occurredAt),
    // The relay's scan: only undispatched events, oldest first.
    index('events_undispatched_idx').on(t.occurredAt).where(sql`${t.dispatchedAt} is null`),
  ],
)
