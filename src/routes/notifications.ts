import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { NotificationSettingsStore } from '../../domain/notifications/settings.ts'
import { saveNotificationSettings } from '../../domain/notifications/use-cases.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { changesOf, NOTIFICATION_MODELS, presentSettings } from './notification-models.ts'
import { checkWebhookUrl } from './webhook-url.ts'

// Notification settings (issue #21, docs/notifications.md, docs/api.md): who gets alert emails and
// the digest, and the Slack and Teams channels. Chat URLs follow the webhook URL rules
// (webhook-url.ts) and are answered masked only.

export interface NotificationRouteDeps {
  settings: NotificationSettingsStore
  auth: AuthDeps
  dns: DnsResolver
  allowPrivate: boolean
}

export function notificationRoutes(deps: NotificationRouteDeps) {
  const checkUrl = (raw: string, field: string) => checkWebhookUrl(deps, raw, field)
  return new Elysia({
    name: 'routes:notifications',
    prefix: '/notifications',
    detail: { tags: ['Notifications'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(NOTIFICATION_MODELS)
    .get('', async ({ principal }) => item(presentSettings(await deps.settings.get(principal.accountId))), {
      auth: true,
      response: { 200: 'NotificationSettingsItem', ...authErrors },
      detail: {
        summary: 'Notification settings',
        description:
          'Alert emails, the digest, and the Slack and Teams channels. The defaults until a save: alert emails from `medium` to every member, a weekly digest in UTC, chat off. Chat URLs are masked.',
      },
    })
    .put(
      '',
      async ({ principal, body }) => {
        const saved = await saveNotificationSettings(
          { settings: deps.settings, checkUrl },
          { accountId: principal.accountId, changes: changesOf(body) },
        )
        return item(presentSettings(unwrap(saved)))
      },
      {
        auth: true,
        body: 'NotificationSettingsUpdate',
        parse: 'json',
        response: { 200: 'NotificationSettingsItem', ...authErrors },
        detail: {
          summary: 'Change notification settings',
          description:
            'A section left out keeps its saved value. Recipients are email addresses (at most 20, deduplicated, empty for every member); `time_zone` an IANA name. A chat `webhook_url` follows the webhook rules: https only, and a host with public addresses only, unless the operator set WEBHOOK_ALLOW_PRIVATE; absent keeps the saved URL, null turns the channel off. Errors name the field, e.g. `slack.webhook_url`.',
        },
      },
    )
}
