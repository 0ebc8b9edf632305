import type { RateLimitCounter } from '../rate-limits/fixed-window.ts'
import type { Logger } from '../shared/logger.ts'
import type { AttemptContext, AttemptMetrics, DeliveryAttempt, DeliveryLedger, SendWebhook } from './ports.ts'
import {
  type AttemptOutcome,
  afterAttempt,
  classifyAttempt,
  deferForRateLimit,
  webhookRateWindow,
} from './schedule.ts'

// One webhook delivery attempt (issue #6, docs/webhooks.md "Storage, relay and jobs"): a stale job
// does nothing, a delivery without a URL or an openable secret gives up, the account's hourly limit
// defers it, otherwise it is posted and the outcome recorded with the chain's next step.

/** The rate-limit counter's key scope: `webhooks:<account id>`, per calendar hour. */
export const WEBHOOK_RATE_SCOPE = 'webhooks'

export interface AttemptDeps {
  ledger: DeliveryLedger
  /** Counts every POST against the account's hour (the shared fixed-window counter). */
  counter: RateLimitCounter
  send: SendWebhook
  /** Opens a sealed secret of the account; throws when it does not open (another SECRET_KEY). */
  openSecret(sealed: string, accountId: string): Promise<string>
  metrics: AttemptMetrics
  logger: Logger
  now: () => Date
  /** RATE_LIMIT_WEBHOOKS_PER_HOUR. */
  perHour: number
}

/** Opens the secret; a value sealed under another key (SECRET_KEY changed) is a final failure. */
async function secretOf(deps: AttemptDeps, context: AttemptContext): Promise<string | null> {
  if (context.secretSealed === null) return null
  try {
    return await deps.openSecret(context.secretSealed, context.accountId)
  } catch {
    return null
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

/**
 * One attempt of one delivery. A receiver's failure is recorded, never thrown: only our own
 * trouble (database down) throws, and the job is retried.
 */
export async function attemptDelivery(deps: AttemptDeps, job: DeliveryAttempt): Promise<void> {
  const { ledger } = deps
  const context = await ledger.attemptContext(job.deliveryId)
  // Stale: this attempt was already recorded (a duplicate or retried run), the chain has ended, or
  // the account is gone. Redelivery is refused while pending, so an ended chain leaves no live job.
  if (context === null || context.status !== 'pending' || context.attempts !== job.attempt - 1) return
  const fields = { delivery_id: context.id, account_id: context.accountId, attempt: job.attempt }
  const secret = await secretOf(deps, context)
  if (context.url === null || secret === null) {
    const why = context.url === null ? 'no webhook URL is set' : 'the webhook secret cannot be opened'
    const now = deps.now()
    await ledger.recordAttempt({
      ...common(job, context, now),
      verdict: 'give_up',
      outcome: `not sent: ${why}`,
      status: null,
      latencyMs: 0,
      responseSnippet: null,
      step: { state: 'failed' },
    })
    deps.metrics.attempted('give_up')
    deps.logger.warn('webhook not sent', { ...fields, reason: why })
    return
  }

  // Every POST counts against the account's hour, retries included (docs/webhooks.md, Limits).
  const now = deps.now()
  const window = webhookRateWindow(now)
  const sent = await deps.counter.hit(`${WEBHOOK_RATE_SCOPE}:${context.accountId}`, {
    start: window.start.getTime() / 1000,
    reset: window.end.getTime() / 1000,
  })
  const wait = deferForRateLimit(sent - 1, deps.perHour, window.end)
  if (wait !== null) {
    if (await ledger.defer(job, wait, now)) {
      deps.metrics.deferred()
      deps.logger.info('webhook deferred by the hourly limit', { ...fields, until: wait.toISOString() })
    }
    return
  }

  const result = await deps.send({
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
  const recorded = await ledger.recordAttempt({
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
  deps.metrics.attempted(verdict)
  const level = step.state === 'failed' ? 'warn' : 'info'
  deps.logger[level]('webhook attempt', {
    ...fields,
    outcome: describe(result.outcome),
    latency_ms: result.latencyMs,
    state: step.state,
    next_attempt_at: step.state === 'pending' ? step.nextAttemptAt.toISOString() : undefined,
  })
}

/** The fields every attempt record shares; the first failure is the chain's anchor (schedule.ts). */
function common(job: DeliveryAttempt, context: AttemptContext, now: Date) {
  return {
    deliveryId: job.deliveryId,
    attempt: job.attempt,
    at: now,
    now,
    firstFailureAt: context.firstFailureAt ?? now,
  }
}
