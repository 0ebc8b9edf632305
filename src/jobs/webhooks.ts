import type { PgBoss } from 'pg-boss'
import { errorFields } from '../../domain/shared/logger.ts'
import { type AttemptDeps, attemptDelivery } from '../../domain/webhooks/attempt.ts'
import type { DeliveryLedger } from '../../domain/webhooks/ports.ts'
import { DELIVER_WEBHOOK } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler, registerJobs } from '../../infrastructure/queue/handlers.ts'

// Webhook delivery (issue #6, docs/webhooks.md "Storage, relay and jobs").
//
// The relay is a loop in the worker, not a pg-boss schedule: cron fires at most once a minute and a
// self-rescheduling job would add two job rows a second to pg-boss's tables, while an idle loop costs
// one indexed `select ... limit 1` every 500 ms. Each worker process runs one; SKIP LOCKED lets them
// share the outbox. After enqueueing it wakes the local delivery worker, so an event is usually
// posted well under a second after its transaction commits. The loop ends when pg-boss stops.
//
// The delivery job makes one attempt (domain/webhooks/attempt.ts). A receiver's failure is
// recorded, never thrown: the handler throws only for our own trouble (database down), which
// pg-boss retries.

/** The outbox side of the relay (infrastructure/repositories/pg-webhook-relay.ts). */
export interface WebhookRelay extends DeliveryLedger {
  hasUndispatched(): Promise<boolean>
  /** One step: up to `limit` events fanned out into deliveries, each with its job. */
  dispatchEvents(limit: number, now: Date): Promise<{ events: number; deliveries: number }>
}

export interface WebhookJobDeps extends Omit<AttemptDeps, 'ledger'> {
  relay: WebhookRelay
  /** How often an idle relay looks at the outbox (default 500 ms). */
  relayIntervalMs?: number
}

export interface WebhookWorkers {
  /** Stops the relay loop (pg-boss's `stopped` event does too) and waits for its current step. */
  stopRelay(): Promise<void>
}

export const RELAY_INTERVAL_MS = 500
const RELAY_BATCH = 100

/**
 * The delivery handler, and the relay loop to start once it is registered: the loop wakes this
 * process's delivery worker after enqueueing, so it needs the worker's id.
 */
export function webhookJobs(boss: PgBoss, deps: WebhookJobDeps) {
  const { relay } = deps
  const attemptDeps: AttemptDeps = { ...deps, ledger: relay }
  // Attempts wait on the network (up to 10 s each), so a batch runs concurrently: 2 × 10 at a time.
  const deliver = handle(
    DELIVER_WEBHOOK,
    { batchSize: 10, localConcurrency: 2, pollingIntervalSeconds: 1 },
    async (jobs) => {
      const results = await Promise.allSettled(jobs.map((job) => attemptDelivery(attemptDeps, job.data)))
      // Attempts already recorded are stale when the batch is retried, so only the failed ones rerun.
      const failed = results.find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
    },
  )
  return {
    handlers: [deliver] as JobHandler[],
    startRelay(workers: ReadonlyMap<string, string>): WebhookWorkers {
      const workerId = workers.get(DELIVER_WEBHOOK.name)
      if (workerId === undefined)
        throw new Error('the webhook relay needs the delivery worker registered first')
      const loop = relayLoop(deps, () => boss.notifyWorker(workerId))
      boss.once('stopped', () => void loop.stopRelay())
      return loop
    },
  }
}

/** The delivery worker and the relay on their own (tests that deliver without the whole worker). */
export async function registerWebhookJobs(boss: PgBoss, deps: WebhookJobDeps): Promise<WebhookWorkers> {
  const jobs = webhookJobs(boss, deps)
  return jobs.startRelay(await registerJobs(boss, jobs.handlers))
}

function relayLoop(deps: WebhookJobDeps, enqueued: () => void): WebhookWorkers {
  let running = true
  let failing = false
  let wake: (() => void) | null = null
  let timer: ReturnType<typeof setTimeout> | undefined
  const done = (async () => {
    while (running) {
      try {
        if (await deps.relay.hasUndispatched()) {
          let step: { events: number; deliveries: number }
          do {
            step = await deps.relay.dispatchEvents(RELAY_BATCH, deps.now())
            if (step.deliveries > 0) enqueued()
          } while (running && step.events === RELAY_BATCH)
        }
        if (failing) deps.logger.info('webhook relay recovered')
        failing = false
      } catch (error) {
        // Logged once per outage, not every 500 ms; the events wait in the outbox meanwhile.
        if (running && !failing) deps.logger.warn('webhook relay step failed', errorFields(error))
        failing = true
      }
      if (!running) break
      await new Promise<void>((resolve) => {
        wake = resolve
        timer = setTimeout(resolve, deps.relayIntervalMs ?? RELAY_INTERVAL_MS)
      })
    }
  })()
  return {
    async stopRelay() {
      running = false
      clearTimeout(timer)
      wake?.()
      await done
    },
  }
}
