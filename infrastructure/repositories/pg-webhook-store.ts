import { and, asc, count, desc, eq, inArray, ne, sql } from 'drizzle-orm'
import type { PageRequest } from '../../domain/shared/pagination.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import type { DeliveryState } from '../../domain/webhooks/schedule.ts'
import type {
  Redelivery,
  WebhookDelivery,
  WebhookSettings,
  WebhookStore,
} from '../../domain/webhooks/settings.ts'
import type { SecretBox } from '../crypto/secret-box.ts'
import type { Db } from '../db/database.ts'
import { events } from '../db/schema/events.ts'
import { webhookAttempts, webhookDeliveries, webhookSettings } from '../db/schema/webhooks.ts'

// Webhook settings and the delivery log (issue #6, docs/webhooks.md). The API never enqueues delivery
// jobs itself: a test ping or a redelivery writes the delivery's new state and puts its event back
// in the outbox (undispatched), in one transaction, and the worker's relay (pg-webhook-relay.ts)
// turns it into a job like any other event. So the API needs no job queue for webhooks, and the
// relay stays the one place where delivery chains start.

/** The secret box context: a sealed secret copied to another account's row does not open there. */
export const secretContext = (accountId: string) => `webhook:${accountId}`

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
type DeliveryRow = typeof webhookDeliveries.$inferSelect

export function pgWebhookStore(db: Db, deps: { secrets: SecretBox }): WebhookStore {
  const seal = (accountId: string, secret: string) => deps.secrets.seal(secret, secretContext(accountId))

  async function present(accountId: string, row: typeof webhookSettings.$inferSelect | undefined) {
    if (row === undefined) return { url: null, secret: null, updatedAt: null } satisfies WebhookSettings
    const secret = await deps.secrets.open(row.secretSealed, secretContext(accountId))
    return { url: row.url, secret, updatedAt: row.updatedAt } satisfies WebhookSettings
  }

  async function withAttempts(rows: DeliveryRow[], tx: Db | Tx = db): Promise<WebhookDelivery[]> {
    if (rows.length === 0) return []
    const attempts = await tx
      .select()
      .from(webhookAttempts)
      .where(
        inArray(
          webhookAttempts.deliveryId,
          rows.map((r) => r.id),
        ),
      )
      .orderBy(asc(webhookAttempts.at), asc(webhookAttempts.attempt))
    return rows.map((row) => ({
      id: row.id,
      event: row.event,
      data: row.data,
      url: row.url,
      status: row.status as DeliveryState,
      attemptCount: row.attempts,
      firstFailureAt: row.firstFailureAt,
      nextAttemptAt: row.nextAttemptAt,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      attempts: attempts
        .filter((a) => a.deliveryId === row.id)
        .map(({ attempt, at, verdict, outcome, status, latencyMs, responseSnippet }) => ({
          attempt,
          at,
          verdict,
          outcome,
          status,
          latencyMs,
          responseSnippet,
        })),
    }))
  }

  const urlOf = async (tx: Tx, accountId: string) =>
    (
      await tx
        .select({ url: webhookSettings.url })
        .from(webhookSettings)
        .where(eq(webhookSettings.accountId, accountId))
    )[0]?.url ?? null

  return {
    async getSettings(accountId: string): Promise<WebhookSettings> {
      const rows = await db.select().from(webhookSettings).where(eq(webhookSettings.accountId, accountId))
      return present(accountId, rows[0])
    },

    /**
     * Sets (or, with null, clears) the URL. The first save also creates the secret; later saves keep
     * it, so changing the URL never breaks a receiver's verification. `freshSecret` is used only then.
     */
    async putUrl(accountId: string, url: string | null, freshSecret: string, now: Date) {
      const sealed = await seal(accountId, freshSecret)
      const [row] = await db
        .insert(webhookSettings)
        .values({ accountId, url, secretSealed: sealed, updatedAt: now })
        .onConflictDoUpdate({ target: webhookSettings.accountId, set: { url, updatedAt: now } })
        .returning()
      return present(accountId, row)
    },

    /** A new secret at once, for every later attempt (retries of earlier events included). */
    async rotateSecret(accountId: string, secret: string, now: Date) {
      const sealed = await seal(accountId, secret)
      const [row] = await db
        .insert(webhookSettings)
        .values({ accountId, url: null, secretSealed: sealed, updatedAt: now })
        .onConflictDoUpdate({
          target: webhookSettings.accountId,
          set: { secretSealed: sealed, updatedAt: now },
        })
        .returning()
      return present(accountId, row)
    },

    async listDeliveries(accountId: string, filter: { status?: DeliveryState }, page: PageRequest) {
      const where = and(
        eq(webhookDeliveries.accountId, accountId),
        filter.status === undefined ? undefined : eq(webhookDeliveries.status, filter.status),
      )
      const [rows, totals] = await Promise.all([
        db
          .select()
          .from(webhookDeliveries)
          .where(where)
          .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ total: count() }).from(webhookDeliveries).where(where),
      ])
      return { items: await withAttempts(rows), total: totals[0]?.total ?? 0 }
    },

    async getDelivery(accountId: string, id: string): Promise<WebhookDelivery | null> {
      if (!isUuid(id)) return null
      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.id, id)))
      return (await withAttempts(rows))[0] ?? null
    },

    /**
     * A `ping` event through the outbox, with its delivery row written now so the caller can read it
     * back at once; the relay enqueues its first attempt. Null when the account has no URL.
     */
    async ping(accountId: string, now: Date): Promise<WebhookDelivery | null> {
      return db.transaction(async (tx) => {
        const url = await urlOf(tx, accountId)
        if (url === null) return null
        const data = { message: 'Test delivery from dmarcwatch', requested_at: now.toISOString() }
        const [event] = await tx
          .insert(events)
          .values({ accountId, type: 'ping', data, occurredAt: now })
          .returning({ id: events.id })
        const [row] = await tx
          .insert(webhookDeliveries)
          .values({
            id: event!.id,
            accountId,
            event: 'ping',
            data,
            url,
            status: 'pending',
            nextAttemptAt: now,
            createdAt: now,
            updatedAt: now,
          })
          .returning()
        return (await withAttempts([row!], tx))[0]!
      })
    },

    /**
     * A new attempt chain on the same delivery id (so receivers deduplicate on X-Webhook-Id), to the
     * current URL. Refused while a chain is running: two chains would send overlapping attempts.
     */
    async redeliver(accountId: string, id: string, now: Date): Promise<Redelivery> {
      if (!isUuid(id)) return { kind: 'not_found' }
      return db.transaction(async (tx) => {
        const mine = and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.id, id))
        // Locked, so a delivery the nightly retention deletes meanwhile is not found (404) rather
        // than taken for one in progress (pg-delivery-log-retention.ts skips locked rows).
        const existing = await tx
          .select({ status: webhookDeliveries.status })
          .from(webhookDeliveries)
          .where(mine)
          .for('update')
        if (existing.length === 0) return { kind: 'not_found' }
        const url = await urlOf(tx, accountId)
        if (url === null) return { kind: 'no_url' }
        const [row] = await tx
          .update(webhookDeliveries)
          .set({
            url,
            status: 'pending',
            attempts: 0,
            firstFailureAt: null,
            nextAttemptAt: now,
            updatedAt: now,
          })
          .where(and(mine, ne(webhookDeliveries.status, 'pending')))
          .returning()
        if (row === undefined) return { kind: 'in_progress' }
        // Back into the outbox. The event row may be gone (the delivery keeps its own copy), so it is
        // written again from the delivery when missing.
        await tx
          .insert(events)
          .values({ id, accountId, type: row.event, data: row.data, occurredAt: now })
          .onConflictDoUpdate({ target: events.id, set: { dispatchedAt: sql`null` } })
        return { kind: 'ok', delivery: (await withAttempts([row], tx))[0]! }
      })
    },
  }
}
