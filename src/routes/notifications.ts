import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import {
  type ChatDeliveryDeps,
  type ChatDeliveryLog,
  sendChatTest,
} from '../../domain/notifications/chat-delivery.ts'
import type { NotificationSettingsStore } from '../../domain/notifications/settings.ts'
import type { TestEmailSender } from '../../domain/notifications/test-email.ts'
import { saveNotificationSettings } from '../../domain/notifications/use-cases.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { changesOf, NOTIFICATION_MODELS, presentSettings } from './notification-models.ts'
import { checkWebhookUrl } from './webhook-url.ts'

// Notification settings (issue #21, docs/notifications.md, docs/api.md): who gets alert emails and
// the digest, and the Slack and Teams channels with their last delivery. Chat URLs follow the
// webhook URL rules (webhook-url.ts) and are answered masked only.

export interface NotificationRouteDeps {
  settings: NotificationSettingsStore
  /** Sends chat test messages now and reads the channels' last deliveries. */
  chat: Pick<ChatDeliveryDeps, 'settings' | 'post' | 'dashboardUrl' | 'now' | 'logger'> & {
    log: ChatDeliveryLog
  }
  testEmail: TestEmailSender
  auth: AuthDeps
  dns: DnsResolver
  allowPrivate: boolean
}

export function notificationRoutes(deps: NotificationRouteDeps) {
  const checkUrl = (raw: string, field: string) => checkWebhookUrl(deps, raw, field)
  const answer = async (
    accountId: string,
    settings?: Awaited<ReturnType<NotificationSettingsStore['get']>>,
  ) =>
    item(
      presentSettings(
        settings ?? (await deps.settings.get(accountId)),
        await deps.chat.log.lastDeliveries(accountId),
      ),
    )
  return new Elysia({
    name: 'routes:notifications',
    prefix: '/notifications',
    detail: { tags: ['Notifications'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(NOTIFICATION_MODELS)
    .get('', ({ principal }) => answer(principal.accountId), {
      auth: true,
      response: { 200: 'NotificationSettingsItem', ...authErrors },
      detail: {
        summary: 'Notification settings',
        description:
          'Alert emails, the digest, and the Slack and Teams channels with their last delivery. The defaults until a save: alert emails on, from `medium` to every member, a weekly digest in UTC, chat off. Chat URLs are masked.',
      },
    })
    .put(
      '',
      async ({ principal, body }) => {
        const saved = await saveNotificationSettings(
          { settings: deps.settings, checkUrl },
          { accountId: principal.accountId, changes: changesOf(body) },
        )
        return answer(principal.accountId, unwrap(saved))
      },
      {
        auth: true,
        body: 'NotificationSettingsUpdate',
        parse: 'json',
        response: { 200: 'NotificationSettingsItem', ...authErrors },
        detail: {
          summary: 'Change notification settings',
          description:
            'A section left out keeps its saved value. `alert_email.enabled` false turns alert emails off (alerts of that time are not mailed later); left out it keeps the saved value. Recipients are email addresses (at most 20, deduplicated, empty for every member); `time_zone` an IANA time zone name (`Europe/Paris`, `UTC`; not an offset such as `+05:00`). A chat `webhook_url` follows the webhook rules: https only, and a host with public addresses only, unless the operator set WEBHOOK_ALLOW_PRIVATE; absent keeps the saved URL, null turns the channel off. Errors name the field, e.g. `slack.webhook_url`.',
        },
      },
    )
    .post(
      '/test',
      async ({ principal, body }) => {
        const { accountId } = principal
        if (body.channel === 'email') {
          const sent = unwrap(await deps.testEmail.sendTest({ accountId }))
          return item({ channel: 'email' as const, ...sent })
        }
        const sent = unwrap(await sendChatTest(deps.chat, { accountId, channel: body.channel }))
        return item({ ...sent, recipients: [] })
      },
      {
        auth: true,
        body: 'NotificationTest',
        parse: 'json',
        response: { 200: 'NotificationTestItem', ...authErrors, 503: 'Error' },
        detail: {
          summary: 'Send a test notification',
          description:
            'Slack or Teams: one message posted now (no retries), answered with its outcome (`delivered` or `failed` with `HTTP 404`, `timeout: …`) and shown as the channel’s last delivery; 400 on `slack.webhook_url` / `teams.webhook_url` when none is saved. Email: a test mail sent now to the alert recipients (also while alert emails are off: the test is an explicit request), answered with what the SMTP server said per address; 503 `email_not_configured` when `MAIL_SMTP_URL` is unset (mails are only logged).',
        },
      },
    )
}
