import { and, eq, isNull, sql } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import type { VerificationStore } from '../../domain/domains/verification.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { domains } from '../db/schema/domains.ts'
import { insert, PROCESS_MESSAGE, retriesOf } from '../queue/catalogue.ts'
import { pgDomainStore } from './pg-domain-store.ts'
import { appendEvent } from './pg-event-outbox.ts'
import { onTransaction } from './pg-ingest-message-store.ts'

// Verification and the reports that waited for it (docs/ingestion.md): marking a domain verified
// re-queues its `domain_not_verified` messages in the same transaction, so a verified domain never
// has a report waiting that nobody will process. Without a queue in the process (tests, tools), the
// worker's periodic sweep (`requeueWaiting` with no domain, src/jobs/posture.ts) does it later.

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** Messages re-queued per transaction; more wait for the next sweep (bounded work per statement). */
export const REQUEUE_BATCH = 2000

/**
 * Puts quarantined `domain_not_verified` messages back to pending and enqueues their jobs, in `tx`:
 * those of one domain, or (domain null) those of every domain verified since they were quarantined.
 */
async function requeue(
  tx: Tx,
  boss: PgBoss,
  scope: { accountId: string; domain: string } | null,
  limit: number,
): Promise<number> {
  const where =
    scope === null
      ? sql`exists (select 1 from domains d where d.account_id = m.account_id
          and d.name = m.quarantine_domain and d.verified_at is not null)`
      : sql`m.account_id = ${scope.accountId} and m.quarantine_domain = ${scope.domain}`
  const rows = rowsOf<{ id: string }>(
    await tx.execute(sql`update ingest_messages set status = 'pending', quarantine_code = null,
        quarantine_reason = null, quarantine_domain = null
      where id in (select m.id from ingest_messages m
        where m.status = 'quarantined' and m.quarantine_code = 'domain_not_verified' and ${where}
        order by m.received_at limit ${limit} for update skip locked)
      returning id`),
  )
  if (rows.length === 0) return 0
  await insert(
    boss,
    PROCESS_MESSAGE,
    rows.map((row) => ({ data: { messageId: row.id }, ...retriesOf(PROCESS_MESSAGE) })),
    { db: onTransaction(tx) },
  )
  return rows.length
}

export function pgDomainVerifications(db: Db, boss: PgBoss | null) {
  const store = pgDomainStore(db)
  return {
    async markVerified(accountId, name, mark) {
      const done = await db.transaction(async (tx) => {
        const rows = await tx
          .update(domains)
          .set({ verifiedAt: mark.event.occurredAt, verifiedBy: mark.proof, verifiedReason: mark.reason })
          .where(and(eq(domains.accountId, accountId), eq(domains.name, name), isNull(domains.verifiedAt)))
          .returning({ id: domains.id })
        // Only the transition writes the event: a concurrent verify that lost the race sends none.
        if (rows[0] === undefined) return 0
        await appendEvent(tx as unknown as Db, accountId, mark.event)
        return boss === null ? 0 : requeue(tx, boss, { accountId, domain: name }, REQUEUE_BATCH)
      })
      const domain = await store.get(accountId, name)
      return domain === null ? null : { domain, requeued: done }
    },

    /** The sweep: waiting messages of domains verified meanwhile, across accounts (for the worker). */
    async requeueWaiting(limit = REQUEUE_BATCH): Promise<number> {
      if (boss === null) return 0
      const queue = boss
      return db.transaction((tx) => requeue(tx, queue, null, limit))
    },
  } satisfies VerificationStore & { requeueWaiting(limit?: number): Promise<number> }
}

export type PgDomainVerifications = ReturnType<typeof pgDomainVerifications>
