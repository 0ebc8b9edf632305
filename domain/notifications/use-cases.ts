import type { AlertSeverity } from '../alerts/alert.ts'
import { ok, type Result } from '../shared/result.ts'
import {
  type ChatChannel,
  type ChatSettings,
  checkSettings,
  type DigestFrequency,
  type NotificationSettings,
  type NotificationSettingsStore,
} from './settings.ts'

// Saving notification settings (docs/notifications.md), shared by PUT /notifications and the
// settings page. A section left out keeps its saved value; a chat URL left out keeps the saved URL
// (the API only ever shows it masked, so a client cannot send it back), null turns the channel off.

export interface ChatChange {
  /** Absent: keep the saved URL; null: channel off; text: a new URL, checked by `checkUrl`. */
  webhookUrl?: string | null
  minSeverity: AlertSeverity
}

export interface NotificationChanges {
  /** `enabled` absent: keep the saved switch (a client that predates it cannot turn mail back on). */
  alertEmail?: { enabled?: boolean; minSeverity: AlertSeverity; recipients: string[] }
  digest?: { frequency: DigestFrequency; recipients: string[]; timeZone: string }
  slack?: ChatChange
  teams?: ChatChange
}

/**
 * The SSRF rules of outbound URLs (https and public addresses unless the operator allows private
 * targets: docs/outbound-http.md); answers the URL as it will be stored, or a validation failure on `field`.
 */
export type CheckChatUrl = (raw: string, field: string) => Promise<Result<string>>

export async function saveNotificationSettings(
  deps: { settings: NotificationSettingsStore; checkUrl: CheckChatUrl },
  input: { accountId: string; changes: NotificationChanges },
): Promise<Result<NotificationSettings>> {
  const current = await deps.settings.get(input.accountId)
  const { changes } = input
  const chat = async (channel: ChatChannel): Promise<Result<ChatSettings>> => {
    const change = changes[channel]
    if (change === undefined) return ok(current[channel])
    if (change.webhookUrl === undefined || change.webhookUrl === null)
      return ok({
        webhookUrl: change.webhookUrl === null ? null : current[channel].webhookUrl,
        minSeverity: change.minSeverity,
      })
    const url = await deps.checkUrl(change.webhookUrl, `${channel}.webhook_url`)
    return url.ok ? ok({ webhookUrl: url.value, minSeverity: change.minSeverity }) : url
  }
  const slack = await chat('slack')
  if (!slack.ok) return slack
  const teams = await chat('teams')
  if (!teams.ok) return teams
  const checked = checkSettings({
    alertEmail:
      changes.alertEmail === undefined
        ? current.alertEmail
        : {
            enabled: changes.alertEmail.enabled ?? current.alertEmail.enabled,
            minSeverity: changes.alertEmail.minSeverity,
            recipients: changes.alertEmail.recipients,
          },
    digest: changes.digest ?? current.digest,
    slack: slack.value,
    teams: teams.value,
  })
  if (!checked.ok) return checked
  await deps.settings.put(input.accountId, checked.value)
  return checked
}
