import type { Page, PageRequest } from '../shared/pagination.ts'
import type { DeliveryState } from './schedule.ts'

// Webhook settings and the delivery log, as the API and the settings page read and change them
// (implemented by infrastructure/repositories/pg-webhook-store.ts; docs/webhooks.md).

export interface WebhookSettings {
  url: string | null
  /** `whsec_...` in clear: the API shows it (docs/webhooks.md, "shown and rotatable"). */
  secret: string | null
  updatedAt: Date | null
}

export interface WebhookAttempt {
  /** 1..5 within its chain; a redelivery starts a new chain at 1. */
  attempt: number
  at: Date
  verdict: string
  outcome: string
  status: number | null
  latencyMs: number
  responseSnippet: string | null
}

export interface WebhookDelivery {
  id: string
  event: string
  data: unknown
  url: string
  status: DeliveryState
  /** Attempts made in the current chain. */
  attemptCount: number
  firstFailureAt: Date | null
  nextAttemptAt: Date | null
  createdAt: Date
  updatedAt: Date
  /** Every attempt, redeliveries included, oldest first. */
  attempts: WebhookAttempt[]
}

export type Redelivery =
  | { kind: 'ok'; delivery: WebhookDelivery }
  | { kind: 'not_found' }
  | { kind: 'in_progress' }
  | { kind: 'no_url' }

export interface WebhookStore {
  getSettings(accountId: string): Promise<WebhookSettings>
  /** Sets the URL; the secret is created with the first URL (`freshSecret`), kept afterwards. */
  putUrl(accountId: string, url: string | null, freshSecret: string, now: Date): Promise<WebhookSettings>
  rotateSecret(accountId: string, secret: string, now: Date): Promise<WebhookSettings>
  listDeliveries(
    accountId: string,
    filter: { status?: DeliveryState },
    page: PageRequest,
  ): Promise<Page<WebhookDelivery>>
  getDelivery(accountId: string, id: string): Promise<WebhookDelivery | null>
  /** A test event's delivery; null when no URL is set. */
  ping(accountId: string, now: Date): Promise<WebhookDelivery | null>
  redeliver(accountId: string, id: string, now: Date): Promise<Redelivery>
}
