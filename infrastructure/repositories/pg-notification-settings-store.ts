import { eq, sql } from 'drizzle-orm'
import type { AlertSeverity } from '../../domain/alerts/alert.ts'
import {
  type ChatChannel,
  defaultNotificationSettings,
  type NotificationSettings,
  type NotificationSettingsStore,
} from '../../domain/notifications/settings.ts'
import type { SecretBox } from '../crypto/secret-box.ts'
import type { Db } from '../db/database.ts'
import { notificationSettings } from '../db/schema/notifications.ts'

// Notification settings (docs/notifications.md): the mail and digest parts as one JSON document, the
// chat URLs sealed (they carry the channel's token) with the secret box under a context naming the
// account and the channel, so a sealed URL copied to another row or column does not open there.

export const chatUrlContext = (accountId: string, channel: ChatChannel) =>
  `notification:${channel}:${accountId}`

/** What the JSON column holds: the settings without the chat URLs. */
interface StoredDocument {
  alertEmail: NotificationSettings['alertEmail']
  digest: NotificationSettings['digest']
  slack: { minSeverity: AlertSeverity }
  teams: { minSeverity: AlertSeverity }
}

export function pgNotificationSettingsStore(db: Db, deps: { secrets: SecretBox }) {
  const open = (accountId: string, channel: ChatChannel, sealed: string | null) =>
    sealed === null ? null : deps.secrets.open(sealed, chatUrlContext(accountId, channel))
  const seal = (accountId: string, channel: ChatChannel, url: string | null) =>
    url === null ? null : deps.secrets.seal(url, chatUrlContext(accountId, channel))

  const store: NotificationSettingsStore = {
    async get(accountId) {
      const [row] = await db
        .select()
        .from(notificationSettings)
        .where(eq(notificationSettings.accountId, accountId))
      const defaults = defaultNotificationSettings()
      if (row === undefined) return defaults
      // Defaults under the stored document: a field added in a later version reads as its default.
      const saved = row.settings as Partial<StoredDocument>
      return {
        alertEmail: { ...defaults.alertEmail, ...saved.alertEmail },
        digest: { ...defaults.digest, ...saved.digest },
        slack: {
          minSeverity: saved.slack?.minSeverity ?? defaults.slack.minSeverity,
          webhookUrl: await open(accountId, 'slack', row.slackUrlSealed),
        },
        teams: {
          minSeverity: saved.teams?.minSeverity ?? defaults.teams.minSeverity,
          webhookUrl: await open(accountId, 'teams', row.teamsUrlSealed),
        },
      }
    },

    async put(accountId, settings) {
      const document: StoredDocument = {
        alertEmail: settings.alertEmail,
        digest: settings.digest,
        slack: { minSeverity: settings.slack.minSeverity },
        teams: { minSeverity: settings.teams.minSeverity },
      }
      const values = {
        settings: document,
        slackUrlSealed: await seal(accountId, 'slack', settings.slack.webhookUrl),
        teamsUrlSealed: await seal(accountId, 'teams', settings.teams.webhookUrl),
        // The database's clock: the column is bookkeeping for operators, not shown by the API.
        updatedAt: sql`now()`,
      }
      await db
        .insert(notificationSettings)
        .values({ accountId, ...values })
        .onConflictDoUpdate({ target: notificationSettings.accountId, set: values })
    },
  }
  return store
}
