import { errorFields } from '../shared/logger.ts'
import { fail, ok } from '../shared/result.ts'
import { recipientsOf } from './alert-mail-job.ts'
import { escapeHtml, mailFooter, mailPage } from './mail-html.ts'
import type { AccountMembers, RenderedMail } from './mail-ports.ts'
import { type SendMailDeps, sendNotificationMail } from './send-mail.ts'
import type { NotificationSettingsStore } from './settings.ts'
import type { TestEmailSender } from './test-email.ts'

// POST /notifications/test {channel: 'email'} (docs/notifications.md "Mail"): a test mail to the
// account's alert-email recipients, sent now through the same path as alert emails (suppressions,
// unsubscribe headers), so what the user checks is what alerts will do.

export function testEmailMail(publicUrl: string): RenderedMail {
  const settings = `${publicUrl}/settings/notifications`
  const line =
    'This is a test of your dmarcwatch alert emails. Alerts will arrive at this address like this mail.'
  return {
    subject: '[dmarcwatch] Test email',
    text: `${line}\n\nNotification settings: ${settings}\n`,
    html: mailPage('Test email', `<p>${escapeHtml(line)}</p>`, mailFooter(settings)),
  }
}

export function emailTestSender(deps: {
  send: SendMailDeps
  settings: Pick<NotificationSettingsStore, 'get'>
  members: AccountMembers
  /** False without MAIL_SMTP_URL: mails are only logged, so a test would prove nothing. */
  smtpConfigured: boolean
}): TestEmailSender {
  return {
    async sendTest({ accountId }) {
      if (!deps.smtpConfigured)
        return fail({
          code: 'email_not_configured',
          message:
            'MAIL_SMTP_URL is not set: notification mails are written to the log, not sent, so no test email can be sent.',
        })
      const { alertEmail } = await deps.settings.get(accountId)
      const recipients = await recipientsOf(deps.members, accountId, alertEmail.recipients)
      const mail = testEmailMail(deps.send.publicUrl)
      const outcomes: string[] = []
      let failed = false
      for (const to of recipients) {
        try {
          const result = await sendNotificationMail(deps.send, { ...mail, accountId, kind: 'alerts', to })
          if (result !== 'sent') failed = true
          outcomes.push(
            `${to}: ${result === 'sent' ? 'accepted' : result === 'bounced' ? 'refused by the mail server' : 'unsubscribed or bounced before'}`,
          )
        } catch (error) {
          failed = true
          outcomes.push(`${to}: not sent (${String(errorFields(error).error ?? 'mail server unreachable')})`)
        }
      }
      return ok({ status: failed ? 'failed' : 'delivered', outcome: outcomes.join('; '), recipients })
    },
  }
}
