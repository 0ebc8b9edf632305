import nodemailer from 'nodemailer'
import type { Logger } from '../../domain/shared/logger.ts'

// Outgoing mail (password reset links, later alerts) through the operator's SMTP server,
// MAIL_SMTP_URL (smtp://user:pass@host:587 with STARTTLS when offered, smtps://host:465 for TLS
// from the start). Without one, mails are written to the log at info level, link included, so a
// development setup or a small install still works: the operator reads the link from the log.

export interface OutgoingMail {
  to: string
  subject: string
  text: string
}

export interface MailSender {
  send(mail: OutgoingMail): Promise<void>
  close(): void
}

export function createMailSender(input: {
  smtpUrl: string | null
  from: string
  logger: Logger
}): MailSender {
  const { smtpUrl, from, logger } = input
  if (smtpUrl === null) {
    return {
      async send(mail) {
        logger.info('mail not sent: MAIL_SMTP_URL is unset', {
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
        })
      },
      close() {},
    }
  }
  // One connection per mail, closed after it: these mails are rare, and a pooled connection left
  // open would outlive its use (and hold up the server's and our own shutdown).
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  } as Parameters<typeof nodemailer.createTransport>[0])
  return {
    async send(mail) {
      const info = await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text })
      logger.info('mail sent', { to: mail.to, subject: mail.subject, message_id: info.messageId })
    },
    close() {
      transport.close()
    },
  }
}

/** The SMTP URL with its password hidden, for logs. */
export function redactSmtpUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'smtp://(unparsable)'
  }
}
