import type { PgBoss, Queue } from 'pg-boss'
import { IMPORT_DOMAINS } from '../../infrastructure/repositories/pg-dns-provider-store.ts'
import { PROCESS_MESSAGE } from '../../infrastructure/repositories/pg-ingest-message-store.ts'
import { DELIVER_WEBHOOK } from '../../infrastructure/repositories/pg-webhook-relay.ts'
import {
  EVALUATE_OPERATIONS_ALERTS,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  SCHEDULE_OPERATIONS_ALERTS,
  SCHEDULE_POSTURE_ALERTS,
  SCHEDULE_REPORT_ALERTS,
} from './alerts.ts'
import { IMPORT_RETRY_LIMIT } from './dns-providers.ts'
import { POLL_MAILBOXES } from './mailboxes.ts'
import { PARTITIONS, RATE_LIMIT_CLEANUP, RETENTION } from './maintenance.ts'
import { PROGRESS_DOMAIN, SCHEDULE_PROGRESSION } from './policy.ts'
import { CHECK_DOMAIN, SCHEDULE_CHECKS, VERIFY_PENDING } from './posture.ts'
import { REFLATTEN_SPF } from './spf.ts'

export const ENRICH_SOURCES = 'ingest.enrich-sources'

// Every queue, created by every process that has a pg-boss (the API enqueues too, and pg-boss
// refuses to send to a queue that does not exist). createQueue is idempotent.
const QUEUES: Queue[] = [
  { name: RATE_LIMIT_CLEANUP, retryLimit: 2, expireInSeconds: 300 },
  { name: RETENTION, policy: 'singleton', retryLimit: 2, expireInSeconds: 3600 },
  // Partition upkeep (src/jobs/maintenance.ts): one run at a time; a run that gave up waiting for
  // a lock retries a few minutes later.
  {
    name: PARTITIONS,
    policy: 'singleton',
    retryLimit: 3,
    retryDelay: 300,
    retryBackoff: true,
    expireInSeconds: 900,
  },
  { name: SCHEDULE_CHECKS, retryLimit: 1, expireInSeconds: 600 },
  // stately: at most one queued and one running check per domain; a failed check retries with backoff.
  {
    name: CHECK_DOMAIN,
    policy: 'stately',
    retryLimit: 3,
    retryDelay: 60,
    retryBackoff: true,
    expireInSeconds: 300,
  },
  { name: VERIFY_PENDING, retryLimit: 1, expireInSeconds: 600 },
  // A message is retried on storage failure (parse failures quarantine instead); 15 min covers a
  // 1 GB report. The heartbeat (refreshed every 15 s while the handler runs) lets a live worker's
  // supervise pass (every 60 s) fail the job of a worker that died mid-message into a retry (due
  // after retryDelay, 30-60 s), instead of waiting out the 15 min expiry (tests/src/scale.test.ts).
  {
    name: PROCESS_MESSAGE,
    retryLimit: 5,
    retryDelay: 30,
    retryBackoff: true,
    expireInSeconds: 900,
    heartbeatSeconds: 30,
  },
  { name: ENRICH_SOURCES, policy: 'singleton', retryLimit: 2, expireInSeconds: 600 },
  { name: POLL_MAILBOXES, policy: 'singleton', retryLimit: 0, expireInSeconds: 600 },
  { name: REFLATTEN_SPF, policy: 'singleton', retryLimit: 2, expireInSeconds: 3600 },
  // One job per webhook attempt (src/jobs/webhooks.ts). A receiver's failure is a recorded attempt,
  // not a job failure; pg-boss retries only cover our own trouble (database down), generously, since
  // a delivery whose job gave up would stay pending. 120 s fits a batch of 10-second attempts.
  {
    name: DELIVER_WEBHOOK,
    retryLimit: 20,
    retryDelay: 5,
    retryBackoff: true,
    retryDelayMax: 600,
    expireInSeconds: 120,
  },
  // Alert evaluation (src/jobs/alerts.ts): schedulers enqueue one job per domain or account, stately
  // so that a key waits at most once; a failed evaluation retries with backoff.
  { name: SCHEDULE_POSTURE_ALERTS, retryLimit: 1, expireInSeconds: 600 },
  { name: SCHEDULE_REPORT_ALERTS, retryLimit: 1, expireInSeconds: 600 },
  { name: SCHEDULE_OPERATIONS_ALERTS, retryLimit: 1, expireInSeconds: 600 },
  ...[EVALUATE_POSTURE_ALERTS, EVALUATE_REPORT_ALERTS, EVALUATE_OPERATIONS_ALERTS].map(
    (name): Queue => ({
      name,
      policy: 'stately',
      retryLimit: 3,
      retryDelay: 30,
      retryBackoff: true,
      expireInSeconds: 300,
    }),
  ),
  // DMARC policy progression (src/jobs/policy.ts): a daily scheduler, then one stately job per
  // domain (at most one queued and one running); a failed run (database trouble) retries.
  { name: SCHEDULE_PROGRESSION, retryLimit: 2, expireInSeconds: 600 },
  {
    name: PROGRESS_DOMAIN,
    policy: 'stately',
    retryLimit: 3,
    retryDelay: 60,
    retryBackoff: true,
    expireInSeconds: 300,
  },
  // Domain imports from DNS providers (src/jobs/dns-providers.ts): one job per import, singleton per
  // import id (never two runs of one import at once; a run paused by the DNS write limit queues the
  // next). A run handles at most one write window's zones, each with a bounded DNS read-back.
  {
    name: IMPORT_DOMAINS,
    policy: 'singleton',
    retryLimit: IMPORT_RETRY_LIMIT,
    retryDelay: 30,
    retryBackoff: true,
    expireInSeconds: 1800,
  },
]

export async function createQueues(boss: PgBoss): Promise<void> {
  for (const { name, policy, partition, ...options } of QUEUES) {
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
