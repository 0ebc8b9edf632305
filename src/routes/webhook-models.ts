import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'
import type { WebhookAttempt, WebhookDelivery, WebhookSettings } from '../../domain/webhooks/settings.ts'
import { enumOf, JsonObject, PageMeta } from '../../plugins/api-models.ts'
import { Line } from '../../plugins/input-schemas.ts'
import { MAX_WEBHOOK_URL_LENGTH } from './webhook-url.ts'

// OpenAPI models and presenters of the webhooks API (src/routes/webhooks.ts, docs/api.md).

const iso = (date: Date | null) => date?.toISOString() ?? null

const SettingsModel = t.Object({
  url: t.Nullable(t.String({ examples: ['https://hooks.example.com/dmarcwatch'] })),
  secret: t.Nullable(
    t.String({
      description: 'The signing secret (HMAC key of X-Webhook-Signature), created with the first URL',
      examples: ['whsec_8rV0yPpXq2mJ6w4bZtN1cD3eF5gH7iK9lM0nO2pQ4rS'],
    }),
  ),
  updated_at: t.Nullable(t.String({ format: 'date-time' })),
})

const AttemptModel = t.Object({
  attempt: t.Integer({ description: '1..5 within its chain; a redelivery starts again at 1' }),
  at: t.String({ format: 'date-time', description: 'When it was sent (the body’s timestamp)' }),
  verdict: enumOf(['delivered', 'retry', 'give_up']),
  outcome: t.String({ examples: ['HTTP 503', 'timeout: no answer within 10 s'] }),
  status: t.Nullable(t.Integer({ description: 'The HTTP status, when there was an answer' })),
  latency_ms: t.Integer(),
  response_snippet: t.Nullable(t.String({ description: 'The first 1 KB of the response body' })),
})

const DeliveryStatus = enumOf(['pending', 'delivered', 'failed'])

const nullableText = t.Union([t.String(), t.Null()])

/**
 * The event's data, as sent in the body; one shape per event (domain/events/event.ts,
 * domain/alerts/lifecycle.ts, and `ping` from POST /webhooks/test). Listed most fields first: a response keeps the fields of the first
 * shape the data matches.
 */
const EventDataModel = t.Union(
  [
    t.Object(
      {
        alert_id: t.Integer({ minimum: 1 }),
        domain: nullableText,
        severity: t.String(),
        title: t.String(),
        resolved_at: t.String({ format: 'date-time' }),
        reason: enumOf(['condition_cleared', 'user']),
      },
      { title: 'alert.resolved' },
    ),
    t.Object(
      {
        alert_id: t.Integer({ minimum: 1 }),
        domain: nullableText,
        severity: t.String(),
        title: t.String(),
      },
      { title: 'alert.created' },
    ),
    t.Object(
      { domain: t.String(), from: t.String(), to: t.String(), reason: t.String() },
      { title: 'dmarc.progressed' },
    ),
    t.Object({ domain: t.String(), record: t.String(), include: t.String() }, { title: 'spf.activated' }),
    t.Object(
      { domain: t.String(), verified_at: t.String({ format: 'date-time' }) },
      { title: 'domain.verified' },
    ),
    t.Object(
      { message: t.String(), requested_at: t.String({ format: 'date-time' }) },
      { title: 'ping', description: 'POST /webhooks/test (infrastructure/repositories/pg-webhook-store.ts)' },
    ),
    // An event stored in a shape none of the above has (an older version's) is still shown.
    JsonObject({ title: 'other', description: 'Any other event data, as stored' }),
  ],
  { description: 'The event’s data, as sent in the body' },
)

const DeliveryModel = t.Object({
  id: t.String({ format: 'uuid', description: 'The event id, also X-Webhook-Id' }),
  event: t.String({ examples: ['domain.verified'] }),
  data: EventDataModel,
  url: t.String(),
  status: DeliveryStatus,
  attempt_count: t.Integer({ description: 'Attempts in the current chain (at most 5)' }),
  first_failure_at: t.Nullable(t.String({ format: 'date-time' })),
  next_attempt_at: t.Nullable(
    t.String({ format: 'date-time', description: 'While pending: when the next attempt is due' }),
  ),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
  attempts: t.Array(AttemptModel, { description: 'Every attempt, redeliveries included, oldest first' }),
})

export const WEBHOOK_MODELS = {
  WebhookSettings: SettingsModel,
  WebhookSettingsItem: t.Object({ data: SettingsModel }),
  WebhookSettingsUpdate: t.Object({
    url: t.Nullable(
      Line({
        maxLength: MAX_WEBHOOK_URL_LENGTH,
        description: 'https URL (http too with WEBHOOK_ALLOW_PRIVATE); null turns webhooks off',
        examples: ['https://hooks.example.com/dmarcwatch'],
      }),
    ),
  }),
  WebhookDelivery: DeliveryModel,
  WebhookDeliveryItem: t.Object({ data: DeliveryModel }),
  WebhookDeliveryList: t.Object({ data: t.Array(DeliveryModel), meta: PageMeta }),
}

export const DeliveryStatusFilter = DeliveryStatus

export const presentSettings = (settings: WebhookSettings) => ({
  url: settings.url,
  secret: settings.secret,
  updated_at: iso(settings.updatedAt),
})

const presentAttempt = (attempt: WebhookAttempt) => ({
  attempt: attempt.attempt,
  at: attempt.at.toISOString(),
  verdict: attempt.verdict as 'delivered' | 'retry' | 'give_up',
  outcome: attempt.outcome,
  status: attempt.status,
  latency_ms: attempt.latencyMs,
  response_snippet: attempt.responseSnippet,
})

export const presentDelivery = (delivery: WebhookDelivery) => ({
  id: delivery.id,
  event: delivery.event,
  data: delivery.data as Static<typeof EventDataModel>,
  url: delivery.url,
  status: delivery.status,
  attempt_count: delivery.attemptCount,
  first_failure_at: iso(delivery.firstFailureAt),
  next_attempt_at: iso(delivery.nextAttemptAt),
  created_at: delivery.createdAt.toISOString(),
  updated_at: delivery.updatedAt.toISOString(),
  attempts: delivery.attempts.map(presentAttempt),
})
