import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { AlertSeverity } from '../../domain/alerts/alert.ts'
import { sendChatTest } from '../../domain/notifications/chat-delivery.ts'
import { SUPPRESSION_KINDS } from '../../domain/notifications/mail-ports.ts'
import type { ChatChannel, DigestFrequency } from '../../domain/notifications/settings.ts'
import { liftSuppression, listSuppressions } from '../../domain/notifications/suppressions.ts'
import {
  type ChatChange,
  type NotificationChanges,
  saveNotificationSettings,
} from '../../domain/notifications/use-cases.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { checkWebhookUrl } from '../routes/webhook-url.ts'
import { noteAccount, viewerOf } from './guards.ts'
import { type FieldErrors, htmlResponse, redirectTo } from './layout.ts'
import { type NotificationForm, notificationSettingsView } from './notification-views.ts'
import type { DashboardServices } from './services.ts'

// Settings → Notifications (docs/notifications.md): the same use case and rules as
// PUT /api/v1/notifications, and the same test messages as POST /api/v1/notifications/test.

/** Suppressions listed on the page (the API pages through all of them). */
const SUPPRESSIONS_SHOWN = 100

/** Longer than 20 addresses of 254 characters with separators: refused before splitting. */
const MAX_RECIPIENTS_TEXT = 6000

const splitAddresses = (text: string) => text.split(/[\s,;]+/).filter((entry) => entry !== '')

/** The use case's dotted fields (`alert_email.recipients`) as the form's (`alert_recipients`). */
const formField = (field: string) => field.replace(/^alert_email\./, 'alert.').replace('.', '_')

export function notificationPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const checkUrl = (raw: string, field: string) => checkWebhookUrl(s.webhookUrl, raw, field)

  const page = async (
    session: ActiveSession,
    extra: { form?: NotificationForm; errors?: FieldErrors; notice?: string | null; status?: number } = {},
  ) => {
    const [settings, last, suppressions] = await Promise.all([
      s.notificationSettings.get(session.accountId),
      s.chat.log.lastDeliveries(session.accountId),
      listSuppressions(
        { suppressions: s.mailSuppressionList },
        { accountId: session.accountId, page: { page: 1, perPage: SUPPRESSIONS_SHOWN } },
      ),
    ])
    const view = notificationSettingsView({
      viewer: viewerOf(session),
      settings,
      last,
      suppressions,
      ...extra,
    })
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  return new Elysia({ name: 'dashboard:notifications' })
    .use(sessions)
    .get(
      '/settings/notifications',
      ({ session, query, request }) => {
        noteAccount(request, session)
        return page(session, { notice: query.saved === '1' ? 'Notification settings saved.' : null })
      },
      { session: true },
    )
    .post(
      '/settings/notifications',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const fields = formOf(body)
        const text = (name: string) => (fields.get(name) ?? '').trim()
        const form: NotificationForm = {
          // A checkbox: posted only when ticked, so its absence means off.
          alert_enabled: fields.get('alert_enabled') === '1' ? '1' : '',
          alert_min_severity: text('alert_min_severity'),
          alert_recipients: text('alert_recipients'),
          digest_frequency: text('digest_frequency'),
          digest_recipients: text('digest_recipients'),
          digest_time_zone: text('digest_time_zone'),
          slack_min_severity: text('slack_min_severity'),
          teams_min_severity: text('teams_min_severity'),
        }
        const tooLong = (['alert_recipients', 'digest_recipients'] as const).filter(
          (name) => (form[name] ?? '').length > MAX_RECIPIENTS_TEXT,
        )
        if (tooLong.length > 0) {
          const errors = Object.fromEntries(tooLong.map((name) => [name, ['Too many addresses.']]))
          return page(session, { form, errors, status: 400 })
        }
        const chat = (channel: ChatChannel): ChatChange => {
          const url = text(`${channel}_webhook_url`)
          const minSeverity = form[`${channel}_min_severity`] as AlertSeverity
          if (fields.get(`${channel}_off`) === '1') return { webhookUrl: null, minSeverity }
          return url === '' ? { minSeverity } : { webhookUrl: url, minSeverity }
        }
        const changes: NotificationChanges = {
          alertEmail: {
            enabled: form.alert_enabled === '1',
            minSeverity: form.alert_min_severity as AlertSeverity,
            recipients: splitAddresses(form.alert_recipients ?? ''),
          },
          digest: {
            frequency: form.digest_frequency as DigestFrequency,
            recipients: splitAddresses(form.digest_recipients ?? ''),
            timeZone: form.digest_time_zone ?? '',
          },
          slack: chat('slack'),
          teams: chat('teams'),
        }
        const saved = await saveNotificationSettings(
          { settings: s.notificationSettings, checkUrl },
          { accountId: session.accountId, changes },
        )
        if (!saved.ok) {
          const failed = saved.failure.code === 'validation_failed' ? saved.failure.errors : {}
          const errors = Object.fromEntries(
            Object.entries(failed).map(([key, messages]) => [formField(key), messages]),
          )
          return page(session, { form, errors, status: 400 })
        }
        s.logger.info('notification settings saved', { account_id: session.accountId })
        return redirectTo('/settings/notifications?saved=1')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/notifications/suppressions',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const fields = formOf(body)
        const address = fields.get('address') ?? ''
        // The form's own values only: anything else is a forged or stale post.
        const kind = SUPPRESSION_KINDS.find((value) => value === fields.get('kind'))
        if (kind === undefined) return page(session, { notice: 'Nothing to lift.', status: 400 })
        const lifted = await liftSuppression(
          { suppressions: s.mailSuppressionList },
          { accountId: session.accountId, recipient: address, kind },
        )
        if (!lifted.ok)
          return lifted.failure.code === 'not_found'
            ? page(session, { notice: `${address} was not suppressed.`, status: 404 })
            : page(session, { notice: 'Nothing to lift.', status: 400 })
        s.logger.info('mail suppression lifted', { account_id: session.accountId, kind })
        return page(session, { notice: `${address} will be mailed again.` })
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/notifications/test',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const channel = formOf(body).get('channel')
        const accountId = session.accountId
        if (channel === 'email') {
          const sent = await s.testEmail.sendTest({ accountId })
          const off = (await s.notificationSettings.get(accountId)).alertEmail.enabled
            ? ''
            : ' Alert emails are off: only this test was sent.'
          const notice = sent.ok
            ? `Test email ${sent.value.status} (${sent.value.outcome}) to ${sent.value.recipients.join(', ')}.${off}`
            : sent.failure.code === 'email_not_configured' || sent.failure.code === 'validation_failed'
              ? `No test email sent: ${sent.failure.message}`
              : 'No test email sent.'
          return page(session, { notice })
        }
        if (channel !== 'slack' && channel !== 'teams')
          return page(session, { notice: 'Choose a channel to test.', status: 400 })
        const sent = await sendChatTest(s.chat, { accountId, channel })
        const name = channel === 'slack' ? 'Slack' : 'Teams'
        const notice = sent.ok
          ? `Test message to ${name}: ${sent.value.status} (${sent.value.outcome}).`
          : `No test message sent: no ${name} webhook URL is saved.`
        return page(session, { notice })
      },
      { session: true, csrf: true },
    )
}
