import type { PgBoss } from 'pg-boss'
import type { AlertEmailSettingsReader } from '../../domain/notifications/alert-mail-job.ts'
import type { SendMailDeps } from '../../domain/notifications/send-mail.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { createMailTransport } from '../../infrastructure/mail/mail-sender.ts'
import { pgAlertMailQueue } from '../../infrastructure/repositories/pg-notification-mail-store.ts'
import type { Config } from '../config.ts'
import type { NotificationMailJobDeps } from '../jobs/notification-mail.ts'
import type { Stores } from './stores.ts'

// Notification mail's deps (docs/notifications.md "Mail"): the send path (suppressions, tokens, the
// SMTP transport) and the alert-email path (the queue of alert changes, settings, members).

export interface NotificationRuntime {
  config: Pick<Config, 'mail' | 'publicUrl' | 'ingestDomain'>
  database: Database
  logger: Logger
  now: () => Date
  random: RandomBytes
}

export function sendMailDeps(
  runtime: NotificationRuntime,
  s: Pick<Stores, 'mailSuppressions' | 'unsubscribeTokens'>,
): SendMailDeps {
  const { config } = runtime
  return {
    suppressions: s.mailSuppressions,
    tokens: s.unsubscribeTokens,
    transport: createMailTransport({
      smtpUrl: config.mail.smtpUrl,
      from: config.mail.from,
      logger: runtime.logger,
    }),
    random: runtime.random,
    now: runtime.now,
    publicUrl: config.publicUrl,
    messageDomain: config.ingestDomain,
  }
}

export function notificationMailDeps(
  runtime: NotificationRuntime,
  boss: PgBoss,
  s: Pick<Stores, 'mailSuppressions' | 'unsubscribeTokens' | 'accountMembers'>,
  settings: AlertEmailSettingsReader,
): NotificationMailJobDeps {
  const db = runtime.database.db
  return {
    send: sendMailDeps(runtime, s),
    alerts: {
      queue: pgAlertMailQueue(db, boss),
      settings,
      members: s.accountMembers,
      publicUrl: runtime.config.publicUrl,
      now: runtime.now,
    },
    logger: runtime.logger,
  }
}
