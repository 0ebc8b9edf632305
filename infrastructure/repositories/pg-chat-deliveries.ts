import { and, desc, eq, inArray, sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { AlertSeverity } from '../../domain/alerts/alert.ts'
import type {
  ChatAttemptRecord,
  ChatDeliveryContext,
  ChatDeliveryLedger,
  ChatDeliveryLog,
  LastChatDelivery,
} from '../../domain/notifications/chat-delivery.ts'
import type { ChatEvent } from '../../domain/notifications/chat-messages.ts'
import {
  atLeast,
  CHAT_CHANNELS,
  type ChatChannel,
  defaultNotificationSettings,
  isSeverity,
} from '../../domain/notifications/settings.ts'
import type { DeliveryState } from '../../domain/webhooks/schedule.ts'
import type { Db } from '../db/database.ts'
import { notificationDeliveries, notificationSettings } from '../db/schema/notifications.ts'
import { type ChatJob, DELIVER_CHAT, insert, send } from '../queue/catalogue.ts'

// Chat deliveries (docs/notifications.md, "Chat messages"). The webhook relay hands every outbox event
// it takes to `dispatchChat` inside its transaction: an `alert.created` or `alert.resolved` at or
// above a channel's threshold becomes a pending delivery and its first job in that transaction, so a
// job never exists for a rolled-back row, and the unique (event, channel) index keeps an event put
// back in the outbox (a webhook redelivery) from posting twice.

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
const jobDb = (tx: Tx) => fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql)

const ALERT_EVENTS = ['alert.created', 'alert.resolved']

/** An outbox event as the relay took it. */
export interface OutboxEvent {
  id: string
  accountId: string
  type: string
  data: unknown
}

/** Deliveries and first jobs for the alert events among `taken`, in the relay's transaction. */
export async function dispatchChat(
  tx: Tx,
  boss: PgBoss,
  taken: readonly OutboxEvent[],
  now: Date,
): Promise<number> {
  const alerts = taken.filter((e) => ALERT_EVENTS.includes(e.type))
  if (alerts.length === 0) return 0
  const rows = await tx
    .select({
      accountId: notificationSettings.accountId,
      settings: notificationSettings.settings,
      slack: sql<boolean>`${notificationSettings.slackUrlSealed} is not null`,
      teams: sql<boolean>`${notificationSettings.teamsUrlSealed} is not null`,
    })
    .from(notificationSettings)
    .where(
      inArray(
        notificationSettings.accountId,
        alerts.map((e) => e.accountId),
      ),
    )
  const byAccount = new Map(rows.map((r) => [r.accountId, r]))
  const defaults = defaultNotificationSettings()
  const values: (typeof notificationDeliveries.$inferInsert)[] = []
  for (const event of alerts) {
    const row = byAccount.get(event.accountId)
    if (row === undefined) continue
    const data = (event.data ?? {}) as Record<string, unknown>
    const severity = typeof data.severity === 'string' && isSeverity(data.severity) ? data.severity : null
    if (severity === null) continue
    const saved = row.settings as Partial<Record<ChatChannel, { minSeverity?: AlertSeverity }>>
    for (const channel of CHAT_CHANNELS) {
      if (!row[channel]) continue
      const threshold = saved[channel]?.minSeverity ?? defaults[channel].minSeverity
      if (!atLeast(severity, threshold)) continue
      values.push({
        accountId: event.accountId,
        channel,
        event: event.type,
        eventId: event.id,
        data,
        status: 'pending',
        createdAt: now,
        updatedAt: now,
      })
    }
  }
  if (values.length === 0) return 0
  const inserted = await tx
    .insert(notificationDeliveries)
    .values(values)
    .onConflictDoNothing()
    .returning({ id: notificationDeliveries.id })
  if (inserted.length > 0)
    await insert(
      boss,
      DELIVER_CHAT,
      inserted.map((d) => ({ data: { deliveryId: d.id, attempt: 1 } })),
      { db: jobDb(tx) },
    )
  return inserted.length
}

/** The delivery still waits for exactly this attempt (stale and duplicate jobs change nothing). */
const awaiting = (deliveryId: string, attempt: number) =>
  and(
    eq(notificationDeliveries.id, deliveryId),
    eq(notificationDeliveries.status, 'pending'),
    eq(notificationDeliveries.attempts, attempt - 1),
  )

export function pgChatDeliveries(db: Db, boss: PgBoss | null): ChatDeliveryLedger & ChatDeliveryLog {
  return {
    async context(deliveryId): Promise<ChatDeliveryContext | null> {
      const [row] = await db
        .select()
        .from(notificationDeliveries)
        .where(eq(notificationDeliveries.id, deliveryId))
      if (row === undefined) return null
      return {
        id: row.id,
        accountId: row.accountId,
        channel: row.channel as ChatChannel,
        event: row.event as ChatEvent,
        data: row.data as Record<string, unknown>,
        status: row.status as DeliveryState,
        attempts: row.attempts,
        createdAt: row.createdAt,
      }
    },

    async recordAttempt(record: ChatAttemptRecord): Promise<boolean> {
      if (boss === null) throw new Error('chat deliveries are recorded by a process with a job queue')
      const { step } = record
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(notificationDeliveries)
          .set({
            status: step.state,
            attempts: record.attempt,
            // A delivery that got through keeps the last failure's reason, for the page's "after N attempts".
            ...(record.error === null ? {} : { error: record.error }),
            updatedAt: record.now,
          })
          .where(awaiting(record.deliveryId, record.attempt))
          .returning({ id: notificationDeliveries.id })
        if (rows.length === 0) return false
        if (step.state === 'pending') {
          const next: ChatJob = { deliveryId: record.deliveryId, attempt: record.attempt + 1 }
          await send(boss, DELIVER_CHAT, next, { startAfter: step.nextAttemptAt, db: jobDb(tx) })
        }
        return true
      })
    },

    async lastDeliveries(accountId) {
      // One indexed probe per channel on (account_id, channel, created_at).
      const found: Partial<Record<ChatChannel, LastChatDelivery>> = {}
      for (const channel of CHAT_CHANNELS) {
        const [row] = await db
          .select()
          .from(notificationDeliveries)
          .where(
            and(eq(notificationDeliveries.accountId, accountId), eq(notificationDeliveries.channel, channel)),
          )
          .orderBy(desc(notificationDeliveries.createdAt))
          .limit(1)
        if (row !== undefined)
          found[channel] = {
            event: row.event as ChatEvent,
            status: row.status as DeliveryState,
            attempts: row.attempts,
            error: row.error,
            at: row.updatedAt,
          }
      }
      return found
    },

    async recordTest(input) {
      await db.insert(notificationDeliveries).values({
        accountId: input.accountId,
        channel: input.channel,
        event: 'test',
        data: {},
        status: input.status,
        attempts: 1,
        error: input.error,
        createdAt: input.now,
        updatedAt: input.now,
      })
    },
  }
}
