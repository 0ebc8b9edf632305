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
  },
  (t) => [index().on(t.accountId, t.occurredAt)],
)
