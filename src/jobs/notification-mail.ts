import { type AlertMailDeps, mailAlertBurst } from '../../domain/notifications/alert-mail-job.ts'
import { type SendMailDeps, sendNotificationMail } from '../../domain/notifications/send-mail.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { MAIL_ALERTS, SEND_NOTIFICATION_MAIL } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

// Notification mail jobs (issue #21, docs/notifications.md "Mail"). `notifications.mail-alerts`
// turns an account's queued alert changes into one mail per recipient; `notifications.send-mail`
// sends one of them. A handler throws only on trouble worth retrying (database, a temporary SMTP
// failure); a suppressed or bounced address is an outcome, logged.

export interface NotificationMailJobDeps {
  send: SendMailDeps
  alerts: AlertMailDeps
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
  ]
}
