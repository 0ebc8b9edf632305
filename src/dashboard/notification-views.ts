import type { LastChatDelivery } from '../../domain/notifications/chat-delivery.ts'
import type { MailSuppression } from '../../domain/notifications/mail-ports.ts'
import {
  type ChatChannel,
  DIGEST_FREQUENCIES,
  MAX_RECIPIENTS,
  maskUrl,
  type NotificationSettings,
  SEVERITIES,
} from '../../domain/notifications/settings.ts'
import type { Page } from '../../domain/shared/pagination.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout, type Viewer } from './layout.ts'

// Settings → Notifications (docs/notifications.md, docs/dashboard.md): alert emails, the digest, and
// the Slack and Teams channels with their last delivery and a "send test" button each. Chat URLs are
// shown masked and never filled back in: an empty URL field keeps the saved one.

/** The form as typed, when it comes back with errors. */
export interface NotificationForm {
  /** '1' when the "Send alert emails" box is ticked (an unticked box is not posted at all). */
  alert_enabled?: string
  alert_min_severity?: string
  alert_recipients?: string
  digest_frequency?: string
  digest_recipients?: string
  digest_time_zone?: string
  slack_min_severity?: string
  teams_min_severity?: string
}

export const FIELD_LABELS: Record<string, string> = {
  alert_enabled: 'Send alert emails',
  alert_min_severity: 'Alert email severity',
  alert_recipients: 'Alert email recipients',
  digest_frequency: 'Digest frequency',
  digest_recipients: 'Digest recipients',
  digest_time_zone: 'Digest time zone',
  slack_webhook_url: 'Slack webhook URL',
  slack_min_severity: 'Slack severity',
  teams_webhook_url: 'Teams webhook URL',
  teams_min_severity: 'Teams severity',
}

const CHANNEL_NAMES: Record<ChatChannel, string> = { slack: 'Slack', teams: 'Microsoft Teams' }
const FREQUENCY_LABELS: Record<string, string> = {
  weekly: 'Weekly (Monday 08:00)',
  daily: 'Daily (08:00)',
  off: 'Off',
}

function select(
  name: string,
  label: string,
  values: readonly string[],
  chosen: string,
  labels: Record<string, string> = {},
) {
  return html`<div><label for="${name}">${label}</label>
<select id="${name}" name="${name}">${values.map(
    (value) =>
      html`<option value="${value}"${value === chosen ? html` selected` : ''}>${labels[value] ?? value}</option>`,
  )}</select></div>`
}

function recipients(name: string, label: string, value: string, errors: FieldErrors) {
  const problems = errors[name] ?? []
  return html`<div><label for="${name}">${label}</label>
<p class="hint" id="${name}-hint">One address a line (at most ${MAX_RECIPIENTS}). Empty: every member of the account.</p>
<textarea id="${name}" name="${name}" rows="3" maxlength="6000" aria-describedby="${name}-hint${problems.length ? ` ${name}-error` : ''}"${problems.length ? html` aria-invalid="true"` : ''}>${value}</textarea>
${problems.length ? html`<p class="field-error" id="${name}-error">${problems.join(' ')}</p>` : ''}</div>`
}

/** Alert emails on or off (docs/notifications.md "Alert emails"): off drops the alerts of that time. */
function alertSwitch(enabled: boolean): SafeHtml {
  return html`<div><label><input type="checkbox" id="alert_enabled" name="alert_enabled" value="1" aria-describedby="alert_enabled-hint"${enabled ? html` checked` : ''}> Send alert emails</label>
<p class="hint" id="alert_enabled-hint">Off: no alert email is sent, and alerts raised meanwhile are not mailed when you turn it back on. The digest, chat channels and the test email are not affected.</p></div>`
}

function lastDelivery(last: LastChatDelivery | undefined): SafeHtml {
  if (last === undefined) return html`<p class="muted">No message sent yet.</p>`
  const state = last.status === 'delivered' ? 'ok' : last.status === 'failed' ? 'critical' : 'unknown'
  return html`<p class="last-delivery">Last message: ${last.event}, ${badge(state, last.status)} after ${last.attempts} ${last.attempts === 1 ? 'attempt' : 'attempts'}, ${time(last.at)}${
    last.error === null
      ? ''
      : html` <span class="muted">(${last.status === 'delivered' ? 'earlier failure' : 'error'}: ${last.error})</span>`
  }</p>`
}

function chatSection(input: {
  channel: ChatChannel
  settings: NotificationSettings
  form: NotificationForm
  errors: FieldErrors
  last: LastChatDelivery | undefined
}): SafeHtml {
  const { channel, errors } = input
  const saved = input.settings[channel]
  const masked = maskUrl(saved.webhookUrl)
  const name = CHANNEL_NAMES[channel]
  const hint =
    masked === null
      ? `The ${channel === 'slack' ? 'incoming webhook' : 'workflow webhook'} URL (https). Empty: the channel stays off.`
      : 'Empty keeps the saved URL.'
  return html`<fieldset class="panel" id="${channel}">
<legend>${name}</legend>
<p>Saved URL: ${masked === null ? html`<span class="muted">none (off)</span>` : html`<code>${masked}</code>`}</p>
${field({ name: `${channel}_webhook_url`, label: `${name} webhook URL`, type: 'url', value: '', hint, errors, extra: html` maxlength="2048" autocomplete="off"` })}
${masked === null ? '' : html`<div><label><input type="checkbox" name="${channel}_off" value="1"> Turn ${name} off (forget the URL)</label></div>`}
${select(`${channel}_min_severity`, 'Post alerts at or above', SEVERITIES, input.form[`${channel}_min_severity`] ?? saved.minSeverity)}
${lastDelivery(input.last)}
</fieldset>`
}

const KIND_LABELS: Record<MailSuppression['kind'], string> = {
  alerts: 'Alert emails',
  digest: 'Digest',
  all: 'Every mail',
}

/** The addresses not mailed, each with a button that lifts its suppression (docs/notifications.md). */
function suppressionSection(page: Page<MailSuppression>, csrf: SafeHtml): SafeHtml {
  const intro = html`<h2 id="suppressions">Addresses not mailed</h2>
<p>An address that used the unsubscribe link of a mail gets no more mail of that kind; one whose mail server refused it permanently gets none at all.</p>`
  if (page.total === 0) return html`${intro}<p class="muted">None: every recipient is mailed.</p>`
  const rows = page.items.map(
    (
      row,
    ) => html`<tr><td>${row.recipient}</td><td>${KIND_LABELS[row.kind]}</td><td>${row.reason === 'bounced' ? html`Bounced${row.detail === null ? '' : html` <span class="muted">(${row.detail})</span>`}` : 'Unsubscribed'}</td><td>${time(row.at)}</td>
<td><form method="post" action="/settings/notifications/suppressions" class="inline">${csrf}<input type="hidden" name="address" value="${row.recipient}"><input type="hidden" name="kind" value="${row.kind}"><button type="submit" class="secondary">Mail again</button></form></td></tr>`,
  )
  const more =
    page.total > page.items.length
      ? html`<p class="muted">${page.items.length} of ${page.total} shown; the API lists them all (GET /api/v1/notifications/suppressions).</p>`
      : ''
  return html`${intro}<table><thead><tr><th scope="col">Address</th><th scope="col">Not sent</th><th scope="col">Why</th><th scope="col">Since</th><th scope="col"><span class="skip">Action</span></th></tr></thead>
<tbody>${rows}</tbody></table>${more}`
}

export function notificationSettingsView(input: {
  viewer: Viewer
  settings: NotificationSettings
  last: Partial<Record<ChatChannel, LastChatDelivery>>
  suppressions: Page<MailSuppression>
  form?: NotificationForm
  errors?: FieldErrors
  notice?: string | null
}): SafeHtml {
  const { viewer, settings } = input
  const csrf = csrfField(viewer.csrfToken)
  const form = input.form ?? {}
  const errors = input.errors ?? {}
  const testButton = (channel: 'email' | ChatChannel, label: string, disabled: boolean) =>
    html`<form method="post" action="/settings/notifications/test" class="inline">${csrf}<input type="hidden" name="channel" value="${channel}"><button type="submit" class="secondary"${disabled ? html` disabled` : ''}>${label}</button></form>`
  const body = html`<h1>Notifications</h1>
<p class="lead">Who hears about alerts, and where: email, a digest, Slack and Microsoft Teams.</p>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${errorSummary(errors, FIELD_LABELS)}
<form method="post" action="/settings/notifications" class="stack" novalidate>
${csrf}
<fieldset class="panel" id="alert-email">
<legend>Alert emails</legend>
${alertSwitch(form.alert_enabled === undefined ? settings.alertEmail.enabled : form.alert_enabled === '1')}
${select('alert_min_severity', 'Email alerts at or above', SEVERITIES, form.alert_min_severity ?? settings.alertEmail.minSeverity)}
${recipients('alert_recipients', 'Recipients', form.alert_recipients ?? settings.alertEmail.recipients.join('\n'), errors)}
</fieldset>
<fieldset class="panel" id="digest">
<legend>Digest</legend>
${select('digest_frequency', 'Frequency', DIGEST_FREQUENCIES, form.digest_frequency ?? settings.digest.frequency, FREQUENCY_LABELS)}
${recipients('digest_recipients', 'Recipients', form.digest_recipients ?? settings.digest.recipients.join('\n'), errors)}
${field({ name: 'digest_time_zone', label: 'Time zone', value: form.digest_time_zone ?? settings.digest.timeZone, hint: 'An IANA name, e.g. Europe/Paris or America/New_York.', errors, extra: html` maxlength="64"` })}
</fieldset>
${chatSection({ channel: 'slack', settings, form, errors, last: input.last.slack })}
${chatSection({ channel: 'teams', settings, form, errors, last: input.last.teams })}
<div><button type="submit">Save notification settings</button></div>
</form>
<h2>Send a test</h2>
<p>A test goes out at once; the answer shows here.</p>
<div class="actions">
${testButton('email', 'Send test email', false)}
${testButton('slack', 'Send test to Slack', settings.slack.webhookUrl === null)}
${testButton('teams', 'Send test to Teams', settings.teams.webhookUrl === null)}
</div>
${suppressionSection(input.suppressions, csrf)}`
  return layout({ title: 'Notifications', viewer, current: '/settings/notifications', body })
}
