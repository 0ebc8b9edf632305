import { and, asc, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { StoredAlert } from '../../domain/alerts/ports.ts'
import type {
  AccountMembers,
  AlertMailQueue,
  MailKind,
  MailOutbox,
  MailSuppressionStore,
  NotificationMail,
  PendingAlertMail,
  UnsubscribeTarget,
  UnsubscribeTokenStore,
} from '../../domain/notifications/mail-ports.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { memberships, users } from '../db/schema/accounts.ts'
import { alerts } from '../db/schema/alerts.ts'
import { domains } from '../db/schema/domains.ts'
import { alertMailQueue, mailSuppressions, mailUnsubscribeTokens } from '../db/schema/notification-mail.ts'
import { insert, MAIL_ALERTS, SEND_NOTIFICATION_MAIL, send } from '../queue/catalogue.ts'

// Notification mail's bookkeeping (docs/notifications.md "Mail"): suppressions, unsubscribe tokens,
// the alert changes waiting for a mail, and the send jobs, each enqueued in the transaction that
// decides it.

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
const jobDb = (tx: Tx | Db) => fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql)

const asKind = (kind: string): MailKind => (kind === 'digest' ? 'digest' : 'alerts')

async function enqueueMails(boss: PgBoss, tx: Tx | Db, mails: readonly NotificationMail[]) {
  if (mails.length === 0) return
  await insert(
    boss,
    SEND_NOTIFICATION_MAIL,
    mails.map((mail) => ({ data: { ...mail } })),
    { db: jobDb(tx) },
  )
}

export function pgMailSuppressionStore(db: Db): MailSuppressionStore {
  return {
    async isSuppressed(accountId, recipient, kind) {
      const rows = await db
        .select({ kind: mailSuppressions.kind })
        .from(mailSuppressions)
        .where(
          and(
            eq(mailSuppressions.accountId, accountId),
            eq(mailSuppressions.recipient, recipient.toLowerCase()),
            or(eq(mailSuppressions.kind, kind), eq(mailSuppressions.kind, 'all')),
          ),
        )
        .limit(1)
      return rows.length > 0
    },
    async bounced(accountId, recipient, detail, now) {
      await db
        .insert(mailSuppressions)
        .values({
          accountId,
          recipient: recipient.toLowerCase(),
          kind: 'all',
          reason: 'bounced',
          detail: detail.slice(0, 500),
          at: now,
        })
        .onConflictDoUpdate({
          target: [mailSuppressions.accountId, mailSuppressions.recipient, mailSuppressions.kind],
          set: { reason: 'bounced', detail: detail.slice(0, 500), at: now },
        })
    },
  }
}

export function pgUnsubscribeTokenStore(db: Db): UnsubscribeTokenStore {
  async function find(tokenHash: string): Promise<UnsubscribeTarget | null> {
    const rows = await db
      .select({
        accountId: mailUnsubscribeTokens.accountId,
        recipient: mailUnsubscribeTokens.recipient,
        kind: mailUnsubscribeTokens.kind,
      })
      .from(mailUnsubscribeTokens)
      .where(eq(mailUnsubscribeTokens.tokenHash, tokenHash))
    const row = rows[0]
    return row === undefined ? null : { ...row, kind: asKind(row.kind) }
  }
  return {
    async issue(tokenHash, target, now) {
      await db.insert(mailUnsubscribeTokens).values({ tokenHash, ...target, createdAt: now })
    },
    find,
    async unsubscribe(tokenHash, now) {
      const target = await find(tokenHash)
      if (target === null) return null
      // A second click changes nothing (RFC 8058 §3.2: the POST may be repeated).
      await db
        .insert(mailSuppressions)
        .values({ ...target, reason: 'unsubscribed', at: now })
        .onConflictDoNothing()
      return target
    },
  }
}

export function pgAlertMailQueue(db: Db, boss: PgBoss): AlertMailQueue {
  return {
    async takePending(accountId, now, compose) {
      return db.transaction(async (tx) => {
        const rows = await tx
          .select({
            queueId: alertMailQueue.id,
            change: alertMailQueue.change,
            alertId: alerts.id,
            number: alerts.number,
            domain: domains.name,
            type: alerts.type,
            subject: alerts.subject,
            severity: alerts.severity,
            title: alerts.title,
            details: alerts.details,
            status: alerts.status,
            resolution: alerts.resolution,
            createdAt: alerts.createdAt,
            updatedAt: alerts.updatedAt,
            resolvedAt: alerts.resolvedAt,
          })
          .from(alertMailQueue)
          .innerJoin(
            alerts,
            and(eq(alerts.id, alertMailQueue.alertId), eq(alerts.accountId, alertMailQueue.accountId)),
          )
          .leftJoin(domains, and(eq(domains.id, alerts.domainId), eq(domains.accountId, alerts.accountId)))
          .where(and(eq(alertMailQueue.accountId, accountId), isNull(alertMailQueue.mailedAt)))
          .orderBy(asc(alertMailQueue.id))
          .for('update', { of: alertMailQueue, skipLocked: true })
        if (rows.length === 0) return { changes: 0, mails: 0 }
        const pending: PendingAlertMail[] = rows.map(({ queueId, change, ...alert }) => ({
          queueId,
          change: change === 'resolved' ? 'resolved' : 'created',
          alert: alert as unknown as StoredAlert,
        }))
        const mails = compose(pending)
        await enqueueMails(boss, tx, mails)
        await tx
          .update(alertMailQueue)
          .set({ mailedAt: now })
          .where(
            inArray(
              alertMailQueue.id,
              pending.map((p) => p.queueId),
            ),
          )
        return { changes: pending.length, mails: mails.length }
      })
    },
  }
}

export function pgMailOutbox(db: Db, boss: PgBoss): MailOutbox {
  return {
    async enqueue(mails) {
      await db.transaction((tx) => enqueueMails(boss, tx, mails))
    },
  }
}

export function pgAccountMembers(db: Db): AccountMembers {
  return {
    async emails(accountId) {
      const rows = await db
        .select({ email: users.email })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(eq(memberships.accountId, accountId))
        .orderBy(asc(memberships.createdAt))
      return rows.map((r) => r.email)
    },
  }
}

/** The default interval of alert emails: at most one per account per 5 minutes (issue #21). */
export const ALERT_MAIL_INTERVAL_SECONDS = 300

/**
 * The relay's part in alert emails (pg-webhook-relay.ts, in its transaction): each `alert.created`
 * or `alert.resolved` event queues its change for the account's next alert email, and the
 * account's mail job is sent debounced like the report alerts (alert-triggers.ts): the first change
 * of a slot is mailed at once; a change after the slot's job started waits for the next slot's job,
 * which every later change of the slot shares. So an account gets at most one alert email per slot.
 */
export async function queueAlertMails(
  tx: Tx,
  boss: PgBoss,
  taken: readonly { accountId: string; type: string; data: unknown }[],
  now: Date,
  intervalSeconds: number,
): Promise<void> {
  const changes = taken.flatMap((event) => {
    const alertId = (event.data as { alert_id?: unknown } | null)?.alert_id
    // The alert's number; an event written before alerts had numbers holds its uuid.
    const number = Number.isSafeInteger(alertId) ? (alertId as number) : null
    const uuid = typeof alertId === 'string' && isUuid(alertId) ? alertId : null
    if (number === null && uuid === null) return []
    if (event.type !== 'alert.created' && event.type !== 'alert.resolved') return []
    const change = event.type === 'alert.created' ? 'created' : 'resolved'
    return [{ account_id: event.accountId, alert_number: number, alert_uuid: uuid, change }]
  })
  if (changes.length === 0) return
  // An alert deleted with its domain since its event has nothing to mail.
  const rows = rowsOf<{ account_id: string }>(
    await tx.execute(sql`insert into alert_mail_queue (account_id, alert_id, change, queued_at)
      select a.account_id, a.id, c.change, ${now.toISOString()}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(changes)}::jsonb)
        as c(account_id uuid, alert_number bigint, alert_uuid uuid, change text)
      join alerts a on (a.number = c.alert_number or a.id = c.alert_uuid) and a.account_id = c.account_id
      on conflict do nothing
      returning account_id`),
  )
  for (const accountId of new Set(rows.map((r) => r.account_id)))
    await send(
      boss,
      MAIL_ALERTS,
      { accountId },
      {
        db: jobDb(tx),
        singletonKey: accountId,
        singletonSeconds: intervalSeconds,
        singletonNextSlot: true,
      },
    )
}

/** How long an unsubscribe link keeps working: a year of a mail kept in an inbox. */
export const UNSUBSCRIBE_TOKEN_DAYS = 365

/**
 * The nightly retention's part (src/compose/maintenance.ts): unsubscribe tokens past their year,
 * alert changes mailed a month ago, digest runs two months old (a period is never claimed again
 * after its day). Suppressions stay: they are the addresses' own wish, or a bounce.
 */
export async function pruneNotificationMail(db: Db): Promise<void> {
  await db.execute(
    sql`delete from mail_unsubscribe_tokens where created_at < now() - make_interval(days => ${UNSUBSCRIBE_TOKEN_DAYS})`,
  )
  await db.execute(sql`delete from alert_mail_queue where mailed_at < now() - interval '30 days'`)
  await db.execute(sql`delete from digest_runs where local_date < current_date - 60`)
}
