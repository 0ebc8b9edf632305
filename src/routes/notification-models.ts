import { t } from 'elysia'
import type { LastChatDelivery } from '../../domain/notifications/chat-delivery.ts'
import {
  type ChatChannel,
  type ChatSettings,
  DIGEST_FREQUENCIES,
  MAX_RECIPIENTS,
  MAX_TIME_ZONE_LENGTH,
  maskUrl,
  type NotificationSettings,
  SEVERITIES,
} from '../../domain/notifications/settings.ts'
import type { NotificationChanges } from '../../domain/notifications/use-cases.ts'
import { enumOf } from '../../plugins/api-models.ts'
import { Line } from '../../plugins/input-schemas.ts'
import { MAX_WEBHOOK_URL_LENGTH } from './webhook-url.ts'

// OpenAPI models and presenters of the notification settings API (src/routes/notifications.ts,
// docs/api.md, docs/notifications.md).

const Severity = (description: string) => enumOf(SEVERITIES, description)
const Frequency = enumOf(DIGEST_FREQUENCIES, 'weekly: Monday 08:00; daily: every day 08:00; off: none')
const Recipients = (description: string) =>
  t.Array(Line({ maxLength: 254, examples: ['postmaster@example.com'] }), {
    maxItems: MAX_RECIPIENTS,
    description,
  })
const TimeZone = Line({
  maxLength: MAX_TIME_ZONE_LENGTH,
  minLength: 1,
  description:
    'IANA time zone name of the digest’s 08:00, as the runtime lists it (Intl), or UTC; not an offset such as +05:00',
  examples: ['Europe/Paris'],
})

const ALERT_EMAIL_ENABLED =
  'False: no alert email is sent, and alerts of that time are not mailed when it is turned back on. The test email is still sent.'
const AlertEmail = t.Object({
  enabled: t.Boolean({ description: ALERT_EMAIL_ENABLED }),
  min_severity: Severity('Alerts at or above this severity are mailed'),
  recipients: Recipients('Empty: every member of the account'),
})
const AlertEmailUpdate = t.Object({
  enabled: t.Optional(t.Boolean({ description: `${ALERT_EMAIL_ENABLED} Absent: keep the saved value.` })),
  min_severity: Severity('Alerts at or above this severity are mailed'),
  recipients: Recipients('Empty: every member of the account'),
})
const Digest = t.Object({
  frequency: Frequency,
  recipients: Recipients('Empty: every member of the account'),
  time_zone: TimeZone,
})

const LastDelivery = t.Nullable(
  t.Object(
    {
      event: enumOf(['alert.created', 'alert.resolved', 'test']),
      status: enumOf(['pending', 'delivered', 'failed']),
      attempts: t.Integer({ description: 'Attempts made (at most 5; a test makes one)' }),
      error: t.Nullable(
        t.String({ description: 'The last failure: `HTTP 500`, `timeout: …`', examples: ['HTTP 404'] }),
      ),
      at: t.String({ format: 'date-time', description: 'When its state last changed' }),
    },
    { description: 'The channel’s newest message and how it went; null before the first' },
  ),
)

const ChatModel = t.Object({
  webhook_url: t.Nullable(
    t.String({
      description: 'Masked: scheme, host and the last four characters. Null: the channel is off.',
      examples: ['https://hooks.slack.com/…x9Zk'],
    }),
  ),
  min_severity: Severity('Alerts at or above this severity are posted'),
  last_delivery: LastDelivery,
})

const ChatUpdate = (channel: string) =>
  t.Object({
    webhook_url: t.Optional(
      t.Nullable(
        Line({
          maxLength: MAX_WEBHOOK_URL_LENGTH,
          description: `The ${channel} webhook URL (https; http too with WEBHOOK_ALLOW_PRIVATE). Absent: keep the saved URL; null: turn the channel off.`,
        }),
      ),
    ),
    min_severity: Severity('Alerts at or above this severity are posted'),
  })

const SettingsModel = t.Object({
  alert_email: AlertEmail,
  digest: Digest,
  slack: ChatModel,
  teams: ChatModel,
})

const TestResult = t.Object({
  channel: enumOf(['email', 'slack', 'teams']),
  status: enumOf(['delivered', 'failed', 'queued']),
  outcome: t.String({ examples: ['HTTP 200', 'HTTP 404', 'timeout: no answer within 10 s'] }),
  recipients: t.Array(t.String(), { description: 'The addresses of a test email; empty for chat' }),
})

export const NOTIFICATION_MODELS = {
  NotificationTest: t.Object({ channel: enumOf(['email', 'slack', 'teams'], 'Where to send the test') }),
  NotificationTestItem: t.Object({ data: TestResult }),
  NotificationSettings: SettingsModel,
  NotificationSettingsItem: t.Object({ data: SettingsModel }),
  NotificationSettingsUpdate: t.Object({
    alert_email: t.Optional(AlertEmailUpdate),
    digest: t.Optional(Digest),
    slack: t.Optional(ChatUpdate('Slack incoming')),
    teams: t.Optional(ChatUpdate('Microsoft Teams workflow')),
  }),
}

type UpdateBody = (typeof NOTIFICATION_MODELS.NotificationSettingsUpdate)['static']

/** The body of PUT /notifications as the use case's changes. */
export function changesOf(body: UpdateBody): NotificationChanges {
  const chat = (c: UpdateBody['slack']) =>
    c === undefined
      ? undefined
      : { minSeverity: c.min_severity, ...(c.webhook_url === undefined ? {} : { webhookUrl: c.webhook_url }) }
  return {
    ...(body.alert_email && {
      alertEmail: {
        ...(body.alert_email.enabled === undefined ? {} : { enabled: body.alert_email.enabled }),
        minSeverity: body.alert_email.min_severity,
        recipients: body.alert_email.recipients,
      },
    }),
    ...(body.digest && {
      digest: {
        frequency: body.digest.frequency,
        recipients: body.digest.recipients,
        timeZone: body.digest.time_zone,
      },
    }),
    ...(body.slack && { slack: chat(body.slack) }),
    ...(body.teams && { teams: chat(body.teams) }),
  }
}

const presentChat = (chat: ChatSettings, last: LastChatDelivery | undefined) => ({
  webhook_url: maskUrl(chat.webhookUrl),
  min_severity: chat.minSeverity,
  last_delivery:
    last === undefined
      ? null
      : {
          event: last.event,
          status: last.status,
          attempts: last.attempts,
          error: last.error,
          at: last.at.toISOString(),
        },
})

/** The settings as the API answers them: chat URLs masked, never in full. */
export const presentSettings = (
  settings: NotificationSettings,
  last: Partial<Record<ChatChannel, LastChatDelivery>>,
) => ({
  alert_email: {
    enabled: settings.alertEmail.enabled,
    min_severity: settings.alertEmail.minSeverity,
    recipients: settings.alertEmail.recipients,
  },
  digest: {
    frequency: settings.digest.frequency,
    recipients: settings.digest.recipients,
    time_zone: settings.digest.timeZone,
  },
  slack: presentChat(settings.slack, last.slack),
  teams: presentChat(settings.teams, last.teams),
})
