// What a webhook delivery attempt reads and writes (implemented by
// infrastructure/repositories/pg-webhook-relay.ts and infrastructure/http/webhook-sender.ts).

import type { WebhookEvent } from './payload.ts'
import type { AttemptOutcome, AttemptVerdict, DeliveryStep } from './schedule.ts'

/** One attempt of one delivery, as its job names it. */
export interface DeliveryAttempt {
  deliveryId: string
  attempt: number
}

/** What one attempt needs: the delivery, and the account's current URL and sealed secret. */
export interface AttemptContext {
  id: string
  accountId: string
  event: string
  data: Record<string, unknown>
  status: string
  attempts: number
  firstFailureAt: Date | null
  /** The account's URL now (null: webhooks turned off since). */
  url: string | null
  secretSealed: string | null
}

export interface AttemptRecord {
  deliveryId: string
  attempt: number
  at: Date
  verdict: AttemptVerdict
  outcome: string
  status: number | null
  latencyMs: number
  responseSnippet: string | null
  /** The URL the attempt went to; absent when nothing was sent (the delivery keeps its URL). */
  url?: string
  step: DeliveryStep
  firstFailureAt: Date | null
  now: Date
}

/** The delivery chain's bookkeeping. */
export interface DeliveryLedger {
  attemptContext(deliveryId: string): Promise<AttemptContext | null>
  /** The same attempt waits for `until` (the next window); false when the job was stale. */
  defer(job: DeliveryAttempt, until: Date, now: Date): Promise<boolean>
  /** The attempt's log row and the delivery's new state; false when another run recorded it. */
  recordAttempt(record: AttemptRecord): Promise<boolean>
}

/** What one POST to the receiver came to. */
export interface SentWebhook {
  outcome: AttemptOutcome
  latencyMs: number
  status?: number
  /** The first 1 KB of the response body. */
  responseSnippet: string
  /** The attempt's time: the body's `timestamp`. */
  attemptAt: Date
}

/** Signs and posts one event (through the guarded client: docs/outbound-http.md). */
export type SendWebhook = (input: {
  url: string
  secret: string
  event: WebhookEvent
}) => Promise<SentWebhook>

/** Counts attempts and deferrals (the process's metrics). */
export interface AttemptMetrics {
  attempted(verdict: AttemptVerdict): void
  deferred(): void
}
