import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'

// Embed keys are public (they appear in a page's source); the allowed origins are what protect them.
export const embedKeys = pgTable(
  'embed_keys',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    key: text().notNull().unique(),
    name: text().notNull(),
    allowedOrigins: jsonb().$type<string[]>().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.accountId)],
)
