import { Elysia, t } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import { fail, invalid } from '../../domain/shared/result.ts'
import { newWebhookSecret } from '../../domain/webhooks/payload.ts'
import type { WebhookStore } from '../../domain/webhooks/settings.ts'
import { apiModels, authErrors, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { IdText } from '../../plugins/input-schemas.ts'
import { DeliveryStatusFilter, presentDelivery, presentSettings, WEBHOOK_MODELS } from './webhook-models.ts'
import { checkWebhookUrl } from './webhook-url.ts'

// Webhook settings, test ping, delivery log and redelivery (issue #6, docs/webhooks.md; docs/api.md,
// docs/webhooks.md). Writes only touch the database: the worker's relay enqueues the attempts.

export interface WebhookRouteDeps {
  webhooks: WebhookStore
  auth: AuthDeps
  now: () => Date
  random: RandomBytes
  dns: DnsResolver
  allowPrivate: boolean
}

const noUrl = () => unwrap(invalid('url', 'No webhook URL is set: save one with PUT /webhooks first.'))
const notFound = () => unwrap(fail({ code: 'not_found', resource: 'webhook delivery' }))
const deliveryParams = t.Object({ id: IdText({ description: 'The delivery id (a UUID)' }) })
const writeErrors = { ...authErrors, 404: 'Error' } as const

export function webhookRoutes(deps: WebhookRouteDeps) {
  const store = deps.webhooks
  const secret = () => newWebhookSecret(deps.random)
  return new Elysia({ name: 'routes:webhooks', prefix: '/webhooks', detail: { tags: ['Webhooks'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(WEBHOOK_MODELS)
    .get('', async ({ principal }) => item(presentSettings(await store.getSettings(principal.accountId))), {
      auth: true,
      response: { 200: 'WebhookSettingsItem', ...authErrors },
      detail: {
        summary: 'Webhook URL and signing secret',
        description: 'All null until a URL is saved or the secret is rotated.',
      },
    })
    .put(
      '',
      async ({ principal, body }) => {
        const url = body.url === null ? null : unwrap(await checkWebhookUrl(deps, body.url))
        return item(presentSettings(await store.putUrl(principal.accountId, url, secret(), deps.now())))
      },
      {
        auth: true,
        body: 'WebhookSettingsUpdate',
        parse: 'json',
        response: { 200: 'WebhookSettingsItem', ...authErrors },
        detail: {
          summary: 'Set the webhook URL',
          description:
            'https only, and the host must resolve to public addresses only (checked now and again before every attempt), unless the operator set WEBHOOK_ALLOW_PRIVATE. The first save creates the secret; later saves keep it. `null` turns webhooks off.',
        },
      },
    )
    .post(
      '/secret/rotate',
      async ({ principal }) =>
        item(presentSettings(await store.rotateSecret(principal.accountId, secret(), deps.now()))),
      {
        auth: true,
        response: { 200: 'WebhookSettingsItem', ...authErrors },
        detail: {
          summary: 'Rotate the signing secret',
          description:
            'The new secret signs every attempt from now on, retries of earlier events included; the old one stops working at once.',
        },
      },
    )
    .post(
      '/test',
      async ({ principal, status }) => {
        const delivery = await store.ping(principal.accountId, deps.now())
        return status(202, item(presentDelivery(delivery ?? noUrl())))
      },
      {
        auth: true,
        response: { 202: 'WebhookDeliveryItem', ...authErrors },
        detail: {
          summary: 'Send a test delivery',
          description:
            'A `ping` event through the same pipeline as real events (outbox, relay, signed POST, retries, delivery log). Answers the pending delivery; follow it with GET /webhooks/deliveries/{id}. 400 on `url` when no URL is set.',
        },
      },
    )
    .get(
      '/deliveries',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        const found = await store.listDeliveries(principal.accountId, { status: query.status }, page)
        return list(found, page, presentDelivery)
      },
      {
        auth: true,
        query: t.Object({ ...PaginationQuery, status: t.Optional(DeliveryStatusFilter) }),
        response: { 200: 'WebhookDeliveryList', ...authErrors },
        detail: {
          summary: 'The delivery log',
          description:
            'Newest first, each delivery with its attempts (status, latency, response snippet, time). Filter with `status` (`pending`, `delivered`, `failed`).',
        },
      },
    )
    .get(
      '/deliveries/:id',
      async ({ principal, params }) =>
        item(presentDelivery((await store.getDelivery(principal.accountId, params.id)) ?? notFound())),
      {
        auth: true,
        params: deliveryParams,
        response: { 200: 'WebhookDeliveryItem', ...authErrors, 404: 'Error' },
        detail: { summary: 'One delivery with its attempts' },
      },
    )
    .post(
      '/deliveries/:id/redeliver',
      async ({ principal, params, status }) => {
        const result = await store.redeliver(principal.accountId, params.id, deps.now())
        switch (result.kind) {
          case 'ok':
            return status(202, item(presentDelivery(result.delivery)))
          case 'not_found':
            return notFound()
          case 'no_url':
            return noUrl()
          case 'in_progress':
            return status(409, {
              error: 'delivery_in_progress',
              message:
                'This delivery is still pending (its retries are running). Redeliver it once it is delivered or failed.',
            })
        }
      },
      {
        auth: true,
        params: deliveryParams,
        response: { 202: 'WebhookDeliveryItem', ...writeErrors, 409: 'Error' },
        detail: {
          summary: 'Redeliver an event',
          description:
            'A new chain of up to five attempts on the same delivery id (X-Webhook-Id unchanged, so receivers can deduplicate), to the current URL, signed with the current secret. Earlier attempts stay in the log. 409 `delivery_in_progress` while the delivery is pending.',
        },
      },
    )
}
