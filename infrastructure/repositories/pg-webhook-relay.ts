import { and, asc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { AttemptContext, AttemptRecord } from '../../domain/webhooks/ports.ts'
import type { Db } from '../db/database.ts'
import { events } from '../db/schema/events.ts'
import { webhookAttempts, webhookDeliveries, webhookSettings } from '../db/schema/webhooks.ts'
import { DELIVER_WEBHOOK, type DeliverJob, insert, send } from '../queue/catalogue.ts'
import { dispatchChat } from './pg-chat-deliveries.ts'

// The outbox relay and the delivery chain's bookkeeping (issue #6). Every write that starts or
// continues a chain enqueues its pg-boss job in the same transaction, so a delivery is never pending
// without a job, and a job never exists for a state that rolled back.

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

const jobDb = (tx: Tx) => fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql)

/** The delivery still waits for exactly this attempt (guards against stale and duplicate jobs). */
const awaiting = (deliveryId: string, attempt: number) =>
  and(
    eq(webhookDeliveries.id, deliveryId),
    eq(webhookDeliveries.status, 'pending'),
    eq(webhookDeliveries.attempts, attempt - 1),
  )

export function pgWebhookRelay(db: Db, boss: PgBoss) {
  return {
    /**
     * One relay step: up to `limit` undispatched events, oldest first, locked with SKIP LOCKED so
     * concurrent relays (several workers) never take the same event. An event of an account with a
     * URL becomes a pending delivery (or, put back by a redelivery or ping, restarts its chain) and a
     * job; without a URL it is only marked dispatched. All of it commits together or not at all.
     */
    async dispatchEvents(limit: number, now: Date): Promise<{ events: number; deliveries: number }> {
      return db.transaction(async (tx) => {
        const taken = await tx
          .select({ id: events.id, accountId: events.accountId, type: events.type, data: events.data })
          .from(events)
          .where(isNull(events.dispatchedAt))
          .orderBy(asc(events.occurredAt))
          .limit(limit)
          .for('update', { skipLocked: true })
        if (taken.length === 0) return { events: 0, deliveries: 0 }
        // Alert events also go to the account's Slack and Teams channels (docs/notifications.md).
        await dispatchChat(tx, boss, taken, now)
        const accounts = [...new Set(taken.map((e) => e.accountId))]
        const urls = new Map(
          (
            await tx
              .select({ accountId: webhookSettings.accountId, url: webhookSettings.url })
              .from(webhookSettings)
              .where(and(inArray(webhookSettings.accountId, accounts), isNotNull(webhookSettings.url)))
          ).map((s) => [s.accountId, s.url!]),
        )
        const deliver = taken.filter((e) => urls.has(e.accountId))
        const skipped = taken.filter((e) => !urls.has(e.accountId)).map((e) => e.id)
        if (deliver.length > 0) {
          await tx
            .insert(webhookDeliveries)
            .values(
              deliver.map((e) => ({
                id: e.id,
                accountId: e.accountId,
                event: e.type,
                data: e.data,
                url: urls.get(e.accountId)!,
                status: 'pending',
                nextAttemptAt: now,
                createdAt: now,
                updatedAt: now,
              })),
            )
            // Only an event put back in the outbox (redelivery, ping) meets its own delivery here.
            .onConflictDoUpdate({
              target: webhookDeliveries.id,
              set: {
                url: sql`excluded.url`,
                status: 'pending',
                attempts: 0,
                firstFailureAt: null,
                nextAttemptAt: now,
                updatedAt: now,
              },
            })
          await insert(
            boss,
            DELIVER_WEBHOOK,
            deliver.map((e) => ({ data: { deliveryId: e.id, attempt: 1 } })),
            { db: jobDb(tx) },
          )
        }
        if (skipped.length > 0) {
          // A redelivery whose account removed its URL in the meantime: nowhere to send it.
          await tx
            .update(webhookDeliveries)
            .set({ status: 'failed', nextAttemptAt: null, updatedAt: now })
            .where(and(inArray(webhookDeliveries.id, skipped), eq(webhookDeliveries.status, 'pending')))
        }
        await tx
          .update(events)
          .set({ dispatchedAt: now })
          .where(
            inArray(
              events.id,
              taken.map((e) => e.id),
            ),
          )
        return { events: taken.length, deliveries: deliver.length }
      })
    },

    /** Cheap and lock-free: lets an idle relay skip opening a transaction. */
    async hasUndispatched(): Promise<boolean> {
      const rows = await db.select({ id: events.id }).from(events).where(isNull(events.dispatchedAt)).limit(1)
      return rows.length > 0
    },

    async attemptContext(deliveryId: string): Promise<AttemptContext | null> {
      const rows = await db
        .select({
          id: webhookDeliveries.id,
          accountId: webhookDeliveries.accountId,
          event: webhookDeliveries.event,
          data: webhookDeliveries.data,
          status: webhookDeliveries.status,
          attempts: webhookDeliveries.attempts,
          firstFailureAt: webhookDeliveries.firstFailureAt,
          url: webhookSettings.url,
          secretSealed: webhookSettings.secretSealed,
        })
        .from(webhookDeliveries)
        .leftJoin(webhookSettings, eq(webhookSettings.accountId, webhookDeliveries.accountId))
        .where(eq(webhookDeliveries.id, deliveryId))
      const row = rows[0]
      return row === undefined ? null : { ...row, data: row.data as Record<string, unknown> }
    },

    /**
     * The hourly limit is reached: the same attempt waits for `until` (the next window). Nothing is
     * dropped and no attempt is used up. False when the job was stale.
     */
    async defer(job: DeliverJob, until: Date, now: Date): Promise<boolean> {
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(webhookDeliveries)
          .set({ nextAttemptAt: until, updatedAt: now })
          .where(awaiting(job.deliveryId, job.attempt))
          .returning({ id: webhookDeliveries.id })
        if (rows.length === 0) return false
        await send(boss, DELIVER_WEBHOOK, job, { startAfter: until, db: jobDb(tx) })
        return true
      })
    },

    /**
     * The attempt's log row and the delivery's new state together, and the next attempt's job when
     * the chain goes on. False (nothing written) when another run already recorded this attempt.
     */
    async recordAttempt(record: AttemptRecord): Promise<boolean> {
      const { step } = record
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(webhookDeliveries)
          .set({
            ...(record.url === undefined ? {} : { url: record.url }),
            status: step.state,
            attempts: record.attempt,
            firstFailureAt: record.firstFailureAt,
            nextAttemptAt: step.state === 'pending' ? step.nextAttemptAt : null,
            updatedAt: record.now,
          })
          .where(awaiting(record.deliveryId, record.attempt))
          .returning({ id: webhookDeliveries.id })
        if (rows.length === 0) return false
        await tx.insert(webhookAttempts).values({
          deliveryId: record.deliveryId,
          attempt: record.attempt,
          at: record.at,
          verdict: record.verdict,
          outcome: record.outcome,
          status: record.status,
          latencyMs: record.latencyMs,
          responseSnippet: record.responseSnippet,
        })
        if (step.state === 'pending') {
          const next: DeliverJob = { deliveryId: record.deliveryId, attempt: record.attempt + 1 }
          await send(boss, DELIVER_WEBHOOK, next, { startAfter: step.nextAttemptAt, db: jobDb(tx) })
        }
        return true
      })
    },
  }
}

export type PgWebhookRelay = ReturnType<typeof pgWebhookRelay>
