import { lt, sql } from 'drizzle-orm'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { Db } from '../db/database.ts'
import { rateLimitCounters } from '../db/schema/rate-limits.ts'

export function pgRateLimitCounter(db: Db): RateLimitCounter {
  return {
    // A single upsert: atomic across every server process sharing the database (contract §3).
    async hit(key, window) {
      const rows = await db
        .insert(rateLimitCounters)
        .values({ key, windowStart: window.start, windowEnd: window.reset, count: 1 })
        .onConflictDoUpdate({
          target: [rateLimitCounters.key, rateLimitCounters.windowStart],
          set: { count: sql`${rateLimitCounters.count} + 1` },
        })
        .returning({ count: rateLimitCounters.count })
      return rows[0]!.count
    },
  }
}

/** Deletes counters of windows that ended before `before` (Unix seconds); run by a cron job. */
export async function deleteExpiredCounters(db: Db, before: number): Promise<number> {
  const rows = await db
    .delete(rateLimitCounters)
    .where(lt(rateLimitCounters.windowEnd, before))
    .returning({ key: rateLimitCounters.key })
  return rows.length
}
