import { type AlertMailDeps, mailAlertBurst } from '../../domain/notifications/alert-mail-job.ts'
import {
  type DigestMailDeps,
  type DigestRuns,
  scheduleDigests,
  sendDigest,
} from '../../domain/notifications/digest-job.ts'
import { type SendMailDeps, sendNotificationMail } from '../../domain/notifications/send-mail.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import {
  MAIL_ALERTS,
  SCHEDULE_DIGESTS,
  SEND_DIGEST,
  SEND_NOTIFICATION_MAIL,
} from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

// Notification mail jobs (issue #21, docs/notifications.md "Mail"). `notifications.mail-alerts`
// turns an account's queued alert changes into one mail per recipient; `notifications.send-mail`
// sends one of them. A handler throws only on trouble worth retrying (database, a temporary SMTP
// failure); a suppressed or bounced address is an outcome, logged. `notifications.schedule-digests`
// (hourly) claims the digests whose local 08:00 has passed; `notifications.digest` renders one and
// queues its mails.

export interface NotificationMailJobDeps {
  send: SendMailDeps
  alerts: AlertMailDeps
  digests: { runs: DigestRuns; mail: DigestMailDeps }
  logger: Logger
}

export function notificationMailJobs(deps: NotificationMailJobDeps): JobHandler[] {
  return [
    handle(SEND_NOTIFICATION_MAIL, { batchSize: 1, pollingIntervalSeconds: 2 }, async ([job]) => {
      const result = await sendNotificationMail(deps.send, job!.data)
      if (result !== 'sent')
        deps.logger.info('notification mail not sent', { to: job!.data.to, kind: job!.data.kind, result })
    }),
    handle(MAIL_ALERTS, { batchSize: 1, pollingIntervalSeconds: 2 }, async ([job]) => {
      const { changes, mails } = await mailAlertBurst(deps.alerts, job!.data.accountId)
      if (changes > 0)
        deps.logger.info('alert email queued', { account_id: job!.data.accountId, changes, mails })
    }),
    handle(SCHEDULE_DIGESTS, async () => {
      const { runs, mail } = deps.digests
      const claimed = await scheduleDigests({ runs, settings: mail.settings, now: mail.now })
      if (claimed > 0) deps.logger.info('digests enqueued', { digests: claimed })
    }),
    handle(SEND_DIGEST, { batchSize: 1 }, async ([job]) => {
      const mails = await sendDigest(deps.digests.mail, job!.data)
      deps.logger.info('digest queued', {
        account_id: job!.data.accountId,
        local_date: job!.data.localDate,
        mails,
      })
    }),
  ]
}
