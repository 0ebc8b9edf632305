import { windowAt } from '../rate-limits/fixed-window.ts'

// docs/webhooks.md: what one delivery attempt's outcome means, when the next attempt is due, and when the
// per-account hourly limit makes a delivery wait. Pure: times come in as arguments.

/** What happened to one POST, as the sender observed it. */
export type AttemptOutcome =
  | { kind: 'response'; status: number }
  | { kind: 'timeout' }
  /** Refused, reset, TLS failure, or the host did not resolve (possibly a passing DNS problem). */
  | { kind: 'connection_error'; message: string }
  /** Never sent: the URL breaks the SSRF rules (scheme, or a non-public address). */
  | { kind: 'blocked'; reason: string }

export type AttemptVerdict = 'delivered' | 'retry' | 'give_up'

/**
 * 2xx is delivered. 5xx, 408, 429, timeouts and connection errors are the receiver's passing trouble:
 * retried. Any other 4xx is the receiver refusing this request, and asking again would not change its
 * mind. 3xx: redirects are never followed (a redirect could point the signed body anywhere, past the
 * SSRF checks), so a redirect is a misconfigured URL and is not retried either. 1xx cannot end a fetch;
 * it is grouped with the other answers we cannot act on. A blocked URL stays blocked until the account
 * changes it.
 */
export function classifyAttempt(outcome: AttemptOutcome): AttemptVerdict {
  switch (outcome.kind) {
    case 'timeout':
    case 'connection_error':
      return 'retry'
    case 'blocked':
      return 'give_up'
    case 'response': {
      const { status } = outcome
      if (status >= 200 && status <= 299) return 'delivered'
      if (status >= 500 || status === 408 || status === 429) return 'retry'
      return 'give_up'
    }
  }
}

/** Offsets of attempts 1..5. Attempt 1 is sent as soon as the event is picked up. */
export const RETRY_DELAYS_MS = [0, 5_000, 30_000, 300_000, 3_600_000] as const
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length

/**
 * When the attempt after `failedAttempts` failures is due, or null once all five have failed.
 *
 * docs/webhooks.md reads "attempts at 0 s, 5 s, 30 s, 5 min, 1 h after the first failure": the offsets are
 * measured from one instant, the end of the first attempt (`firstFailureAt`), not chained from attempt
 * to attempt, so a chain ends about an hour after it started whatever each attempt took. Anchoring on
 * the first failure rather than on the first attempt's start keeps the 5 s pause after a first attempt
 * that used its whole 10 s timeout. A due time already past (a slow attempt, a worker that was down)
 * becomes `lastAttemptEndedAt`: attempts never overlap and are never sent in the past.
 */
export function nextAttemptAt(
  failedAttempts: number,
  firstFailureAt: Date,
  lastAttemptEndedAt: Date,
): Date | null {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1)
    throw new Error(`failedAttempts must be a positive integer, got ${failedAttempts}`)
  if (failedAttempts >= MAX_ATTEMPTS) return null
  const due = firstFailureAt.getTime() + RETRY_DELAYS_MS[failedAttempts]!
  return new Date(Math.max(due, lastAttemptEndedAt.getTime()))
}

export type DeliveryState = 'pending' | 'delivered' | 'failed'

export type DeliveryStep =
  | { state: 'delivered' }
  | { state: 'failed' }
  | { state: 'pending'; nextAttemptAt: Date }

/**
 * The delivery's state after attempt number `attempt` (1-based) ended at `endedAt` with `verdict`.
 * `firstFailureAt` is that of earlier attempts; for attempt 1 it is `endedAt` itself.
 */
export function afterAttempt(input: {
  verdict: AttemptVerdict
  attempt: number
  endedAt: Date
  firstFailureAt?: Date
}): DeliveryStep {
  if (input.verdict === 'delivered') return { state: 'delivered' }
  if (input.verdict === 'give_up') return { state: 'failed' }
  const next = nextAttemptAt(input.attempt, input.firstFailureAt ?? input.endedAt, input.endedAt)
  return next === null ? { state: 'failed' } : { state: 'pending', nextAttemptAt: next }
}

// docs/api.md "Authentication and limits": 1000 deliveries per hour per account in fixed calendar hours, like the API limits.
// Every POST counts, retries included: the limit protects the receiver, and a retry is a request to it
// like any other. Excess deliveries wait for the next hour; none is dropped, and waiting does not use
// up one of the five attempts.
export const WEBHOOK_WINDOW_SECONDS = 3600

/** The calendar hour containing `now`. */
export function webhookRateWindow(now: Date): { start: Date; end: Date } {
  const window = windowAt(now, WEBHOOK_WINDOW_SECONDS)
  return { start: new Date(window.start * 1000), end: new Date(window.reset * 1000) }
}

/**
 * Null when one more POST may go now, else when to try again (the next window's start).
 * `sentInWindow` counts POSTs already sent in the current window, not the one about to go; with a
 * counter that returns the count including this hit (RateLimitCounter.hit), pass that count minus one.
 */
export function deferForRateLimit(sentInWindow: number, limit: number, windowEnd: Date): Date | null {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`limit must be a positive integer, got ${limit}`)
  return sentInWindow < limit ? null : new Date(windowEnd.getTime())
}
