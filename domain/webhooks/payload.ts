import { encodeBase64urlNoPadding } from '@oslojs/encoding'
import type { RandomBytes } from '../shared/random.ts'
import { isUuid } from '../shared/uuid.ts'

// docs/webhooks.md: what a webhook request carries. The body is built per attempt, because `timestamp` is
// the time of that attempt; the signature covers these exact bytes, so the string built here is the
// one sent and signed, never re-serialised on the way.

export interface WebhookEvent {
  /** The outbox event id (a UUID): also the delivery id, see webhookDeliveryId. */
  id: string
  type: string
  data: Record<string, unknown>
}

/**
 * `{"event", "timestamp", "data"}` in that key order (docs/webhooks.md order; receivers that log raw
 * bodies see a stable shape). `timestamp` is ISO 8601 UTC with milliseconds, the attempt's own time,
 * so a receiver enforcing a 5 minute tolerance accepts a retry sent an hour after the event.
 */
export function webhookBody(event: Pick<WebhookEvent, 'type' | 'data'>, attemptAt: Date): string {
  return JSON.stringify({ event: event.type, timestamp: attemptAt.toISOString(), data: event.data })
}

export const WEBHOOK_SECRET_PREFIX = 'whsec_'
const SECRET_BYTES = 32
const SECRET_SHAPE = /^whsec_[A-Za-z0-9_-]{43}$/

/**
 * `whsec_` + 32 random bytes in unpadded base64url (43 characters): 256 bits, the HMAC-SHA256 block
 * size's worth of key, and a prefix that makes a leaked secret greppable like `dw_` tokens. The whole
 * string, prefix included, is the HMAC key (its UTF-8 bytes): receivers paste it as they see it.
 */
export function newWebhookSecret(random: RandomBytes): string {
  const bytes = random(SECRET_BYTES)
  if (bytes.length !== SECRET_BYTES) throw new Error(`a webhook secret needs ${SECRET_BYTES} random bytes`)
  return WEBHOOK_SECRET_PREFIX + encodeBase64urlNoPadding(bytes)
}

export function looksLikeWebhookSecret(value: string): boolean {
  return SECRET_SHAPE.test(value)
}

/**
 * `X-Webhook-Id`: the outbox event's UUID, lower-cased. One account has one URL, so an event is one
 * delivery, and its id stays the same across retries and manual redeliveries (as GitHub's delivery
 * GUID does): receivers deduplicate on it.
 */
export function webhookDeliveryId(eventId: string): string {
  if (!isUuid(eventId)) throw new Error(`an outbox event id is a UUID, got ${JSON.stringify(eventId)}`)
  return eventId.toLowerCase()
}
