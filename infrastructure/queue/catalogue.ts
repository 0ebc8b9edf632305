import type { InsertOptions, JobInsert, PgBoss, Queue, SendOptions } from 'pg-boss'

// Every pg-boss queue in one place: its name, the payload its jobs carry and its options (and, for
// a queue pg-boss fills on a schedule, the cron). It lives in infrastructure/ because both sides
// enqueue: the repositories send a job in the transaction that writes its row (a message, a webhook
// delivery, a domain import), and the jobs in src/jobs/ send follow-up work. src/worker.ts
// registers one handler per queue (infrastructure/queue/handlers.ts); docs/architecture.md.

export interface QueueSpec<Payload extends object> {
  readonly name: string
  /** pg-boss queue options. Policy is fixed at creation; the rest is applied again at each start. */
  readonly options: Omit<Queue, 'name'>
  /** Cron (UTC): pg-boss enqueues one job per tick, once across all processes. */
  readonly cron?: string
  /** Never set: carries the payload type to `send`, `insert` and the handler. */
  readonly payload?: Payload
}

/** The payload of a queue filled only by its cron. */
export type Tick = Record<string, never>

const queue = <Payload extends object = Tick>(
  name: string,
  options: Omit<Queue, 'name'>,
  cron?: string,
): QueueSpec<Payload> => ({ name, options, ...(cron === undefined ? {} : { cron }) })

/** A domain of an account, as the per-domain alert and progression jobs carry it. */
export interface DomainJob {
  accountId: string
  domainId: number
}

// Maintenance (src/jobs/maintenance.ts).
export const RATE_LIMIT_CLEANUP = queue(
  'maintenance.rate-limit-cleanup',
  { retryLimit: 2, expireInSeconds: 300 },
  '*/10 * * * *',
)
export const RETENTION = queue(
  'maintenance.retention',
  { policy: 'singleton', retryLimit: 2, expireInSeconds: 3600 },
  // Nightly, in small batches, after expired months are dropped whole.
  '17 3 * * *',
)
// Partition upkeep: one run at a time; a run that gave up waiting for a lock retries a few minutes
// later. Daily, so a run that could not get its locks has weeks of retries before a month is needed.
export const PARTITIONS = queue(
  'maintenance.partitions',
  { policy: 'singleton', retryLimit: 3, retryDelay: 300, retryBackoff: true, expireInSeconds: 900 },
  '7 0 * * *',
)
// Monthly rollups of closed months (pg-monthly-rollups.ts): nightly, one run at a time, and at start
// so that an install upgraded or down over a month boundary builds them at once. Only months without
// a current build are built, so a run with nothing to do is one small read.
export const MONTHLY_ROLLUPS = queue(
  'maintenance.monthly-rollups',
  { policy: 'singleton', retryLimit: 2, retryDelay: 300, expireInSeconds: 3600 },
  '37 2 * * *',
)

// Posture checks and ownership re-checks (src/jobs/posture.ts).
export const SCHEDULE_CHECKS = queue(
  'posture.schedule-checks',
  { retryLimit: 1, expireInSeconds: 600 },
  '*/10 * * * *',
)
// stately: at most one queued and one running check per domain; a failed check retries with backoff.
export const CHECK_DOMAIN = queue<{ accountId: string; name: string }>('posture.check-domain', {
  policy: 'stately',
  retryLimit: 3,
  retryDelay: 60,
  retryBackoff: true,
  expireInSeconds: 300,
})
export const VERIFY_PENDING = queue(
  'domains.verify-pending',
  { retryLimit: 1, expireInSeconds: 600 },
  '*/15 * * * *',
)

// Report intake (src/jobs/ingest.ts, src/jobs/mailboxes.ts). A message is retried on storage failure
// (parse failures quarantine instead); 15 min covers a 1 GB report. The heartbeat (refreshed every
// 15 s while the handler runs) lets a live worker's supervise pass (every 60 s) fail the job of a
// worker that died mid-message into a retry (due after retryDelay, 30-60 s), instead of waiting out
// the 15 min expiry (tests/src/scale.test.ts). Enqueued by pg-ingest-message-store.ts and
// pg-domain-verification.ts in the transaction that stores or re-queues the message.
export const PROCESS_MESSAGE = queue<{ messageId: string }>('ingest.process-message', {
  retryLimit: 5,
  retryDelay: 30,
  retryBackoff: true,
  expireInSeconds: 900,
  heartbeatSeconds: 30,
})
/** A large report whose per-source rollup may still be pending, and its domain. */
export interface MergeJob extends DomainJob {
  reportId: number
}
// A large report's per-source rollup, should the writer not have merged it right after the commit
// (infrastructure/repositories/aggregate-report-merge.ts): sent in the report's transaction, due a
// minute after its end; it finds nothing to do when the writer merged the rows itself.
export const MERGE_ROLLUPS = queue<MergeJob>('ingest.merge-rollups', {
  retryLimit: 10,
  retryDelay: 30,
  retryBackoff: true,
  expireInSeconds: 900,
})
export const ENRICH_SOURCES = queue(
  'ingest.enrich-sources',
  { policy: 'singleton', retryLimit: 2, expireInSeconds: 600 },
  '*/5 * * * *',
)
export const POLL_MAILBOXES = queue(
  'ingest.poll-mailboxes',
  { policy: 'singleton', retryLimit: 0, expireInSeconds: 600 },
  '* * * * *',
)

// Managed SPF records re-planned as provider networks change (src/jobs/spf.ts).
export const REFLATTEN_SPF = queue(
  'spf.reflatten',
  { policy: 'singleton', retryLimit: 2, expireInSeconds: 3600 },
  '23 * * * *',
)

// A failed SPF write through a connected DNS provider (`automatic`, domain/spf-management/
// provider-retry.ts; enqueued by pg-spf-proposal-store.ts in the transaction that stores the
// `retrying` row): retried with backoff, 1 min doubling to at most 30 min, over about 4 hours; after
// the last retry the write is given up (`abandoned`) and the alert says so.
export interface SpfRetryJob {
  accountId: string
  domainId: number
  /** The domain's name (the SPF store finds domains by name). */
  domain: string
  proposalId: number
}
export const SPF_PROVIDER_RETRY = queue<SpfRetryJob>('spf.provider-retry', {
  retryLimit: 10,
  retryDelay: 60,
  retryBackoff: true,
  retryDelayMax: 1800,
  expireInSeconds: 300,
})

// One job per webhook attempt (src/jobs/webhooks.ts; enqueued by pg-webhook-relay.ts). A receiver's
// failure is a recorded attempt, not a job failure; pg-boss retries only cover our own trouble
// (database down), generously, since a delivery whose job gave up would stay pending. 120 s fits a
// batch of 10-second attempts. `attempt` is the attempt the job makes: a job whose delivery moved
// on is stale.
export interface DeliverJob {
  deliveryId: string
  attempt: number
}
export const DELIVER_WEBHOOK = queue<DeliverJob>('webhooks.deliver', {
  retryLimit: 20,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 600,
  expireInSeconds: 120,
})

// One job per Slack or Teams attempt (src/jobs/notifications.ts; enqueued by pg-chat-deliveries.ts
// from the webhook relay, in the transaction that writes the delivery). Same policy as webhook
// attempts: a channel's failure is a recorded attempt, pg-boss retries only cover our own trouble.
export interface ChatJob {
  deliveryId: string
  attempt: number
}
export const DELIVER_CHAT = queue<ChatJob>('notifications.chat', {
  retryLimit: 20,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 600,
  expireInSeconds: 120,
})

// Alert evaluation (src/jobs/alerts.ts): one job per domain or account, stately so that a key waits
// at most once; a failed evaluation retries with backoff. The stores that write the facts enqueue at
// once (alert-triggers.ts: a posture check in its transaction; aggregate and failure reports
// debounced to one run per 5-minute slot); the schedulers are the safety net. Posture: every 15
// minutes. Reports: hourly (the windows move at midnight UTC). Operations: every 15 minutes, offset
// from the posture run.
const SCHEDULER = { retryLimit: 1, expireInSeconds: 600 }
const EVALUATION = {
  policy: 'stately',
  retryLimit: 3,
  retryDelay: 30,
  retryBackoff: true,
  expireInSeconds: 300,
} as const
export const SCHEDULE_POSTURE_ALERTS = queue('alerts.schedule-posture', SCHEDULER, '*/15 * * * *')
export const SCHEDULE_REPORT_ALERTS = queue('alerts.schedule-reports', SCHEDULER, '23 * * * *')
export const SCHEDULE_OPERATIONS_ALERTS = queue('alerts.schedule-operations', SCHEDULER, '7-59/15 * * * *')
export const EVALUATE_POSTURE_ALERTS = queue<DomainJob>('alerts.evaluate-posture', EVALUATION)
export const EVALUATE_REPORT_ALERTS = queue<DomainJob>('alerts.evaluate-reports', EVALUATION)
export const EVALUATE_OPERATIONS_ALERTS = queue<{ accountId: string }>(
  'alerts.evaluate-operations',
  EVALUATION,
)

// DMARC policy progression (src/jobs/policy.ts): a daily scheduler at 05:17 UTC, after most
// receivers have sent the previous day's reports (RFC 9990, daily), then one stately job per domain
// (at most one queued and one running); a failed run (database trouble) retries.
export const SCHEDULE_PROGRESSION = queue(
  'policy.schedule-progression',
  { retryLimit: 2, expireInSeconds: 600 },
  '17 5 * * *',
)
export const PROGRESS_DOMAIN = queue<DomainJob>('policy.progress-domain', {
  policy: 'stately',
  retryLimit: 3,
  retryDelay: 60,
  retryBackoff: true,
  expireInSeconds: 300,
})

// Domain imports from DNS providers (src/jobs/dns-providers.ts; enqueued by pg-dns-provider-store.ts):
// one job per import, singleton per import id (never two runs of one import at once; a run paused by
// the DNS write limit queues the next). A run handles at most one write window's zones, each with a
// bounded DNS read-back. After the last retry the job marks the import failed.
export interface ImportJob {
  importId: string
}
export const IMPORT_DOMAINS = queue<ImportJob>('dns-providers.import-domains', {
  policy: 'singleton',
  retryLimit: 3,
  retryDelay: 30,
  retryBackoff: true,
  expireInSeconds: 1800,
})

// Notification mail (src/jobs/notification-mail.ts, docs/notifications.md "Mail"). One job per
// mail and recipient: a temporary SMTP failure (4xx, no connection) retries with backoff for about
// a day (60 s doubling, at most an hour apart); a 5xx to RCPT TO is a bounce, recorded, not retried.
// The alert-mail job of an account is debounced by the relay (pg-webhook-relay.ts) to one per
// 5-minute slot, so a burst of alerts becomes one mail. The digest scheduler runs hourly and
// enqueues each account's digest once its local 08:00 has passed (digest_runs keeps it to one).
export interface NotificationMailJob {
  accountId: string
  kind: 'alerts' | 'digest'
  to: string
  subject: string
  html: string
  text: string
  images?: { cid: string; filename: string; contentType: string; base64: string }[]
}
export const SEND_NOTIFICATION_MAIL = queue<NotificationMailJob>('notifications.send-mail', {
  retryLimit: 12,
  retryDelay: 60,
  retryBackoff: true,
  retryDelayMax: 3600,
  expireInSeconds: 120,
})
export const MAIL_ALERTS = queue<{ accountId: string }>('notifications.mail-alerts', {
  retryLimit: 5,
  retryDelay: 30,
  retryBackoff: true,
  expireInSeconds: 300,
})
export const SCHEDULE_DIGESTS = queue(
  'notifications.schedule-digests',
  { retryLimit: 1, expireInSeconds: 600 },
  '3 * * * *',
)
export interface DigestJob {
  accountId: string
  frequency: 'daily' | 'weekly'
  /** The account's local date of the digest (its 08:00), YYYY-MM-DD. */
  localDate: string
}
export const SEND_DIGEST = queue<DigestJob>('notifications.digest', {
  retryLimit: 5,
  retryDelay: 60,
  retryBackoff: true,
  expireInSeconds: 600,
})

/** Every queue, created by every process that has a pg-boss (the API enqueues too). */
export const QUEUES: readonly QueueSpec<object>[] = [
  RATE_LIMIT_CLEANUP,
  RETENTION,
  PARTITIONS,
  MONTHLY_ROLLUPS,
  SCHEDULE_CHECKS,
  CHECK_DOMAIN,
  VERIFY_PENDING,
  PROCESS_MESSAGE,
  MERGE_ROLLUPS,
  ENRICH_SOURCES,
  POLL_MAILBOXES,
  REFLATTEN_SPF,
  SPF_PROVIDER_RETRY,
  DELIVER_WEBHOOK,
  DELIVER_CHAT,
  SCHEDULE_POSTURE_ALERTS,
  SCHEDULE_REPORT_ALERTS,
  SCHEDULE_OPERATIONS_ALERTS,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  EVALUATE_OPERATIONS_ALERTS,
  SCHEDULE_PROGRESSION,
  PROGRESS_DOMAIN,
  IMPORT_DOMAINS,
  SEND_NOTIFICATION_MAIL,
  MAIL_ALERTS,
  SCHEDULE_DIGESTS,
  SEND_DIGEST,
]

/** One job onto a queue, its payload checked against the queue's type. */
export function send<Payload extends object>(
  boss: PgBoss,
  spec: QueueSpec<Payload>,
  data: Payload,
  options?: SendOptions,
): Promise<string | null> {
  return boss.send(spec.name, data, options)
}

/** Several jobs onto a queue in one statement. */
export function insert<Payload extends object>(
  boss: PgBoss,
  spec: QueueSpec<Payload>,
  jobs: (JobInsert<Payload> & { data: Payload })[],
  options?: InsertOptions,
): Promise<string[] | null> {
  return boss.insert(spec.name, jobs, options)
}

/** The queue's own retry policy, for jobs that carry it (pg-ingest-message-store.ts). */
export function retriesOf(
  spec: QueueSpec<object>,
): Pick<Queue, 'retryLimit' | 'retryDelay' | 'retryBackoff'> {
  const { retryLimit, retryDelay, retryBackoff } = spec.options
  return { retryLimit, retryDelay, retryBackoff }
}

export async function createQueues(boss: PgBoss): Promise<void> {
  for (const { name, options: queueOptions } of QUEUES) {
    const { policy, partition, ...options } = queueOptions
    // createQueue leaves an existing queue as it was: the settings that may change (retries,
    // expiry, heartbeat) are applied again, so an upgraded install gets them at its next start.
    // Policy and partitioning are fixed at creation (pg-boss refuses to change them).
    await boss.createQueue(name, {
      ...options,
      ...(policy ? { policy } : {}),
      ...(partition ? { partition } : {}),
    })
    if (Object.keys(options).length > 0) await boss.updateQueue(name, options)
  }
}
