import { sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { DigestRuns } from '../../domain/notifications/digest-job.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { digestRuns } from '../db/schema/notification-mail.ts'
import { SEND_DIGEST, send } from '../queue/catalogue.ts'

// Digest runs (docs/notifications.md "Mail"): a digest is claimed by inserting its (account,
// frequency, local date) row; the job is enqueued in the same transaction, so a digest has exactly
// one job, whichever scheduler run (or worker) gets there first.

export function pgDigestRuns(db: Db, boss: PgBoss): DigestRuns {
  return {
    async accountsWithDomains() {
      const rows = rowsOf<{ id: string }>(
        await db.execute(
          sql`select a.id from accounts a where exists (select 1 from domains d where d.account_id = a.id) order by a.id`,
        ),
      )
      return rows.map((r) => String(r.id))
    },
    async claim(accountId, frequency, localDate, now) {
      return db.transaction(async (tx) => {
        const claimed = await tx
          .insert(digestRuns)
          .values({ accountId, frequency, localDate, enqueuedAt: now })
          .onConflictDoNothing()
          .returning({ accountId: digestRuns.accountId })
        if (claimed.length === 0) return false
        await send(
          boss,
          SEND_DIGEST,
          { accountId, frequency, localDate },
          {
            db: fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql),
            singletonKey: `${accountId}:${frequency}:${localDate}`,
          },
        )
        return true
      })
    },
  }
}
