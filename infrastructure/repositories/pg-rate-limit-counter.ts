import { lt, sql } from 'drizzle-orm'
import { type BatchCounter, coalescedCounter } from '../../domain/rate-limits/coalesced-counter.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { Db } from '../db/database.ts'
import { rateLimitCounters } from '../db/schema/rate-limits.ts'

/** A single upsert per hit: atomic across every server process sharing the database (docs/api.md "Authentication and limits"). */
export function pgBatchCounter(db: Db): BatchCounter {
  return {
    async hitBy(key, window, n) {
      const rows = await db
        .insert(rateLimitCounters)
        .values({ key, windowStart: window.start, windowEnd: window.reset, count: n })
        .onConflictDoUpdate({
          target: [rateLimitCounters.key, rateLimitCounters.windowStart],
          set: { count: sql`${rateLimitCounters.count} + ${n}` },
        })
        .returning({ count: rateLimitCounters.count })
      return rows[0]!.count
    },
  }
}

/** The counter a process uses: concurrent hits of one key share one upsert (coalesced-counter.ts). */
export function pgRateLimitCounter(db: Db): RateLimitCounter {
  return coalescedCounter(pgBatchCounter(db))
}

/** Deletes counters of windows that ended before `before` (Unix seconds); run by a cron job. */
export async function deleteExpiredCounters(db: Db, before: number): Promise<number> {
  const rows = await db
    .delete(rateLimitCounters)
    .where(lt(rateLimitCounters.windowEnd, before))
    .returning({ key: rateLimitCounters.key })
  return rows.length
}
