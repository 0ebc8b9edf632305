import type { PgBoss } from 'pg-boss'
import type { AlertEmailSettingsReader } from '../../domain/notifications/alert-mail-job.ts'
import type { SendMailDeps } from '../../domain/notifications/send-mail.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { createMailTransport } from '../../infrastructure/mail/mail-sender.ts'
import { dailyVolumePng } from '../../infrastructure/mail/png-chart.ts'
import { pgDigestRuns } from '../../infrastructure/repositories/pg-digest-runs.ts'
import {
  pgAlertMailQueue,
  pgMailOutbox,
} from '../../infrastructure/repositories/pg-notification-mail-store.ts'
import type { Config } from '../config.ts'
import type { NotificationMailJobDeps } from '../jobs/notification-mail.ts'
import type { ProcessStores, Stores } from './stores.ts'

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

type DigestStores = Pick<
  ProcessStores,
  'reports' | 'alertFacts' | 'figures' | 'alerts' | 'policy' | 'notificationSettings'
>

/** What the digest reads and how it draws its chart: for the digest job and the preview. */
export function digestPreviewDeps(runtime: NotificationRuntime, s: DigestStores) {
  return {
    figures: {
      reports: s.reports,
      domains: s.alertFacts,
      sources: { stats: s.figures.stats, firstSeen: s.alertFacts.firstSeen },
      alerts: s.alerts,
      policy: s.policy,
    },
    settings: s.notificationSettings,
    chart: dailyVolumePng,
    publicUrl: runtime.config.publicUrl,
    now: runtime.now,
  }
}

export function notificationMailDeps(
  runtime: NotificationRuntime,
  boss: PgBoss,
  s: Pick<Stores, 'mailSuppressions' | 'unsubscribeTokens' | 'accountMembers'> & DigestStores,
  settings: AlertEmailSettingsReader,
): NotificationMailJobDeps {
  const db = runtime.database.db
  return {
    digests: {
      runs: pgDigestRuns(db, boss),
      mail: { ...digestPreviewDeps(runtime, s), members: s.accountMembers, outbox: pgMailOutbox(db, boss) },
    },
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
