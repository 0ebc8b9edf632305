import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import {
  type AttemptOutcome,
  afterAttempt,
  classifyAttempt,
  deferForRateLimit,
  webhookRateWindow,
} from '../../domain/webhooks/schedule.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { sendWebhook } from '../../infrastructure/http/webhook-sender.ts'
import { webhookAttempts, webhookDeferrals } from '../../infrastructure/metrics/instruments.ts'
import { DELIVER_WEBHOOK, type DeliverJob } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler, registerJobs } from '../../infrastructure/queue/handlers.ts'
import { pgRateLimitCounter } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import {
  type AttemptContext,
  type PgWebhookRelay,
  pgWebhookRelay,
} from '../../infrastructure/repositories/pg-webhook-relay.ts'
import { secretContext } from '../../infrastructure/repositories/pg-webhook-store.ts'
import type { Config } from '../config.ts'

// Webhook delivery (issue #6, contract §5, docs/webhooks.md "Storage, relay and jobs").
//
// The relay is a loop in the worker, not a pg-boss schedule: cron fires at most once a minute and a
// self-rescheduling job would add two job rows a second to pg-boss's tables, while an idle loop costs
// one indexed `select ... limit 1` every 500 ms. Each worker process runs one; SKIP LOCKED lets them
// share the outbox. After enqueueing it wakes the local delivery worker, so an event is usually
// posted well under a second after its transaction commits. The loop ends when pg-boss stops.
//
// The delivery job makes one attempt. A receiver's failure is recorded, never thrown: the handler
// throws only for our own trouble (database down), which pg-boss retries.

export interface WebhookJobDeps {
  database: Database
  logger: Logger
  now: () => Date
  secrets: SecretBox
  dns: DnsResolver
  allowPrivate: boolean
  perHour: number
  /** How often an idle relay looks at the outbox (default 500 ms). */
  relayIntervalMs?: number
}

/** The deps as a process builds them from its runtime (the worker, and tests that deliver). */
export function webhookJobDeps(
  runtime: Pick<WebhookJobDeps, 'database' | 'logger' | 'now' | 'secrets' | 'dns'> & {
    config: Pick<Config, 'webhookAllowPrivate' | 'rateLimits'>
  },
): WebhookJobDeps {
  return {
    database: runtime.database,
    logger: runtime.logger,
    now: runtime.now,
    secrets: runtime.secrets,
    dns: runtime.dns,
    allowPrivate: runtime.config.webhookAllowPrivate,
    perHour: runtime.config.rateLimits.webhooksPerHour,
  }
}

export interface WebhookWorkers {
  /** Stops the relay loop (pg-boss's `stopped` event does too) and waits for its current step. */
  stopRelay(): Promise<void>
}

export const RELAY_INTERVAL_MS = 500
const RELAY_BATCH = 100
/** The rate-limit counter's key scope: `webhooks:<account id>`, per calendar hour. */
export const WEBHOOK_RATE_SCOPE = 'webhooks'

/**
 * The delivery handler, and the relay loop to start once it is registered: the loop wakes this
 * process's delivery worker after enqueueing, so it needs the worker's id.
 */
export function webhookJobs(boss: PgBoss, deps: WebhookJobDeps) {
  const relay = pgWebhookRelay(deps.database.db, boss)
  const attempt = attemptMaker(deps, relay)
  // Attempts wait on the network (up to 10 s each), so a batch runs concurrently: 2 × 10 at a time.
  const deliver = handle(
    DELIVER_WEBHOOK,
    { batchSize: 10, localConcurrency: 2, pollingIntervalSeconds: 1 },
    async (jobs) => {
      const results = await Promise.allSettled(jobs.map((job) => attempt(job.data)))
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
      const loop = relayLoop(deps, relay, () => boss.notifyWorker(workerId))
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

function relayLoop(deps: WebhookJobDeps, relay: PgWebhookRelay, enqueued: () => void): WebhookWorkers {
  let running = true
  let failing = false
  let wake: (() => void) | null = null
  let timer: ReturnType<typeof setTimeout> | undefined
  const done = (async () => {
    while (running) {
      try {
        if (await relay.hasUndispatched()) {
          let step: { events: number; deliveries: number }
          do {
            step = await relay.dispatchEvents(RELAY_BATCH, deps.now())
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

function describe(outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case 'response':
      return `HTTP ${outcome.status}`
    case 'timeout':
      return 'timeout: no answer within 10 s'
    case 'connection_error':
      return `connection error: ${outcome.message}`
    case 'blocked':
      return `blocked: ${outcome.reason}`
  }
}

function attemptMaker(deps: WebhookJobDeps, relay: PgWebhookRelay) {
  const counter = pgRateLimitCounter(deps.database.db)
  const sender = { dns: deps.dns, allowPrivate: deps.allowPrivate, now: deps.now }

  /** Opens the secret; a value sealed under another key (SECRET_KEY changed) is a final failure. */
  async function secretOf(context: AttemptContext): Promise<string | null> {
    if (context.secretSealed === null) return null
    try {
      return await deps.secrets.open(context.secretSealed, secretContext(context.accountId))
    } catch {
      return null
    }
  }

  return async function attempt(job: DeliverJob): Promise<void> {
    const context = await relay.attemptContext(job.deliveryId)
    // Stale: this attempt was already recorded (a duplicate or retried run), the chain has ended, or
    // the account is gone. Redelivery is refused while pending, so an ended chain leaves no live job.
    if (context === null || context.status !== 'pending' || context.attempts !== job.attempt - 1) return
    const fields = { delivery_id: context.id, account_id: context.accountId, attempt: job.attempt }
    const secret = await secretOf(context)
    if (context.url === null || secret === null) {
      const why = context.url === null ? 'no webhook URL is set' : 'the webhook secret cannot be opened'
      const now = deps.now()
      await relay.recordAttempt({
        ...common(job, context, now),
        verdict: 'give_up',
        outcome: `not sent: ${why}`,
        status: null,
        latencyMs: 0,
        responseSnippet: null,
        step: { state: 'failed' },
      })
      webhookAttempts.inc({ verdict: 'give_up' })
      deps.logger.warn('webhook not sent', { ...fields, reason: why })
      return
    }

    // Every POST counts against the account's hour, retries included (docs/webhooks.md, Limits).
    const now = deps.now()
    const window = webhookRateWindow(now)
    const sent = await counter.hit(`${WEBHOOK_RATE_SCOPE}:${context.accountId}`, {
      start: window.start.getTime() / 1000,
      reset: window.end.getTime() / 1000,
    })
    const wait = deferForRateLimit(sent - 1, deps.perHour, window.end)
    if (wait !== null) {
      if (await relay.defer(job, wait, now)) {
        webhookDeferrals.inc()
        deps.logger.info('webhook deferred by the hourly limit', { ...fields, until: wait.toISOString() })
      }
      return
    }

    const result = await sendWebhook(sender, {
      url: context.url,
      secret,
      event: { id: context.id, type: context.event, data: context.data },
    })
    const endedAt = deps.now()
    const verdict = classifyAttempt(result.outcome)
    const step = afterAttempt({
      verdict,
      attempt: job.attempt,
      endedAt,
      firstFailureAt: context.firstFailureAt ?? undefined,
    })
    const recorded = await relay.recordAttempt({
      ...common(job, context, endedAt),
      at: result.attemptAt,
      firstFailureAt: context.firstFailureAt ?? (verdict === 'delivered' ? null : endedAt),
      url: context.url,
      verdict,
      outcome: describe(result.outcome),
      status: result.status ?? null,
      latencyMs: result.latencyMs,
      responseSnippet: result.responseSnippet === '' ? null : result.responseSnippet,
      step,
    })
    if (!recorded) return
    webhookAttempts.inc({ verdict })
    const level = step.state === 'failed' ? 'warn' : 'info'
    deps.logger[level]('webhook attempt', {
      ...fields,
      outcome: describe(result.outcome),
      latency_ms: result.latencyMs,
      state: step.state,
      next_attempt_at: step.state === 'pending' ? step.nextAttemptAt.toISOString() : undefined,
    })
  }
}

/** The fields every attempt record shares; the first failure is the chain's anchor (schedule.ts). */
function common(job: DeliverJob, context: AttemptContext, now: Date) {
  return {
    deliveryId: job.deliveryId,
    attempt: job.attempt,
    at: now,
    now,
    firstFailureAt: context.firstFailureAt ?? now,
  }
}
