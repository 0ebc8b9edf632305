import { bigint, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'

// Fixed-window counters shared by every server process (docs/api.md "Authentication and limits"). Old windows are deleted by a
// pg-boss cron job; a counter row lives at most a couple of windows.
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    key: text().notNull(),
    windowStart: bigint({ mode: 'number' }).notNull(),
    windowEnd: bigint({ mode: 'number' }).notNull(),
    count: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.windowStart] })],
)
