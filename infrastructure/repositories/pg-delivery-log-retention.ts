import { sql } from 'drizzle-orm'
import { CHAT_CHANNELS } from '../../domain/notifications/settings.ts'
import type { Db } from '../db/database.ts'
import { inBatches } from './pg-retention.ts'

// Retention of the append-only logs around the outbox (docs/webhooks.md and docs/notifications.md,
// "Retention"): dispatched events, finished webhook deliveries (their attempts go with them, on
// delete cascade) and finished chat deliveries, run nightly with the other retention
// (src/compose/maintenance.ts). Nothing here is needed by a pending pg-boss job: delivery jobs read
// only pending deliveries (a stale job finding its delivery gone does nothing), and the relay reads
// only undispatched events.
//
// Every scan goes account by account (a lateral join over accounts), so it runs on indexes whose
// first column is the account: events (account_id, occurred_at), webhook_deliveries (account_id,
// status, updated_at; migration 0020, which the alert's facts read too), notification_deliveries
// (account_id, channel, created_at). The
// candidates are locked with SKIP LOCKED: a row a redelivery is changing at that moment is left for
// the next night instead of being deleted from under it (or waited for). Batches as in
// pg-retention.ts, so no statement holds long locks.

/**
 * Days a finished delivery (counted from when it finished) or a dispatched event is kept: long
 * enough to look back over a month and redeliver (docs/webhooks.md "Retention").
 * A constant, like the other log windows of the maintenance job (pg-notification-mail-store.ts);
 * the per-account windows (account_settings, pg-retention.ts) cover report data only, and no log
 * the maintenance job prunes has an environment setting (README.md "Configuration").
 */
export const DELIVERY_LOG_DAYS = 30

export interface DeliveryLogPruned {
  events: number
  webhookDeliveries: number
  chatDeliveries: number
}

export async function pruneDeliveryLogs(
  db: Db,
  options: { days?: number; batch?: number } = {},
): Promise<DeliveryLogPruned> {
  const batch = options.batch ?? 5000
  const cutoff = sql`now() - make_interval(days => ${options.days ?? DELIVERY_LOG_DAYS})`

  // Dispatched events only: an undispatched one still waits for the relay (dispatched_at null never
  // compares below the cutoff). A webhook delivery keeps its own copy of its event, and a
  // redelivery writes the event again from it when the row is gone (pg-webhook-store.ts), so the
  // event row is not needed once dispatched. An event put back by a redelivery has its dispatch
  // time renewed, so it stays another window.
  const events = await inBatches(
    db,
    () => sql`with doomed as (
      select e.id from accounts a cross join lateral (
        select e.id from events e
        where e.account_id = a.id and e.occurred_at < ${cutoff} and e.dispatched_at < ${cutoff}
        limit ${batch} for update skip locked) e
      limit ${batch})
    , done as (delete from events where id in (select id from doomed) returning 1)
    select count(*)::int as n from done`,
    batch,
  )

  // Finished deliveries once the window has passed since they finished (updated_at: a redelivery
  // renews it). Never a pending one: its chain is running. The webhook_delivery_failing alert
  // counts the failures since the account's last delivered one (pg-operations-facts.ts: after the
  // newest updated_at among delivered), and resolves only after a delivery gets through
  // (docs/webhooks.md); so a failure it counts stays (it is also the only way left to redeliver that
  // event), and so does the delivered delivery that last time comes from: pruning it would move the
  // alert's start back and count older failures again. Both are kept by `updated_at < ok.at`
  // (null, never true, when nothing was delivered). The scan reads (account_id, status, updated_at).
  const webhookDeliveries = await inBatches(
    db,
    () => sql`with doomed as (
      select w.id from accounts a
      cross join lateral (
        select max(x.updated_at) as at from webhook_deliveries x
        where x.account_id = a.id and x.status = 'delivered') ok
      cross join lateral (
        select w.id from webhook_deliveries w
        where w.account_id = a.id and w.status in ('delivered', 'failed')
          and w.updated_at < ${cutoff} and w.updated_at < ok.at
        limit ${batch} for update skip locked) w
      limit ${batch})
    , done as (delete from webhook_deliveries where id in (select id from doomed) returning 1)
    select count(*)::int as n from done`,
    batch,
  )

  // Finished chat deliveries, by when they finished. The unique (event_id, channel) index is what
  // keeps an event the relay takes again from posting a second message (pg-chat-deliveries.ts), so
  // a delivery's row must outlive every way its event can come back to the relay:
  // - the event is still undispatched: the relay has yet to take it (again);
  // - its webhook delivery exists: a redelivery puts the event back (rewriting it from the
  //   delivery's copy if it was pruned), at any time, whatever the event row's age.
  // Nothing else resets dispatched_at or writes an event with an old id, so once neither holds the
  // event cannot reach dispatchChat again and its chat rows can go. Tests (no event) go by age.
  // Each channel's newest delivery stays: GET /notifications shows it as `last_delivery`.
  const channels = sql.join(
    CHAT_CHANNELS.map((c) => sql`${c}`),
    sql`, `,
  )
  const chatDeliveries = await inBatches(
    db,
    () => sql`with doomed as (
      select d.id from accounts a cross join lateral (
        select d.id from notification_deliveries d
        where d.account_id = a.id and d.channel in (${channels})
          and d.created_at < ${cutoff} and d.updated_at < ${cutoff}
          and d.status in ('delivered', 'failed')
          and d.created_at < (select max(n.created_at) from notification_deliveries n
            where n.account_id = d.account_id and n.channel = d.channel)
          and (d.event_id is null or (
            not exists (select 1 from webhook_deliveries w where w.id = d.event_id)
            and not exists (select 1 from events e where e.id = d.event_id and e.dispatched_at is null)))
        limit ${batch} for update skip locked) d
      limit ${batch})
    , done as (delete from notification_deliveries where id in (select id from doomed) returning 1)
    select count(*)::int as n from done`,
    batch,
  )
  return { events, webhookDeliveries, chatDeliveries }
}
