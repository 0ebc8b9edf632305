import type { MailTransport, OutgoingMessage, SendOutcome } from '../../domain/notifications/send-mail.ts'
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

/**
 * Notification mail (docs/notifications.md "Mail"): HTML with its plain-text alternative, inline
 * images, extra headers and our own Message-ID. The SMTP server's refusal of the recipient (5xx to
 * RCPT TO, RFC 5321 §4.2.1) is a `rejected` outcome; anything temporary (4xx, no connection, a
 * timeout) is thrown, so the job retries it.
 */
export function createMailTransport(input: {
  smtpUrl: string | null
  from: string
  logger: Logger
}): MailTransport {
  const { smtpUrl, from, logger } = input
  if (smtpUrl === null) {
    return {
      async send(mail) {
        logger.info('mail not sent: MAIL_SMTP_URL is unset', {
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          headers: mail.headers,
        })
        return { status: 'sent' }
      },
    }
  }
  return {
    async send(mail: OutgoingMessage): Promise<SendOutcome> {
      // A connection per mail, closed after it: these mails come in small numbers (a burst is one
      // mail per recipient), and a connection left open would outlive its use (and hold up shutdown).
      // Loaded on the first mail: a service without MAIL_SMTP_URL, or one that has sent none yet,
      // keeps nodemailer out of its memory (docs/operations.md, "Sizing").
      const { default: nodemailer } = await import('nodemailer')
      const transport = nodemailer.createTransport({
        url: smtpUrl,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      } as Parameters<typeof nodemailer.createTransport>[0])
      try {
        const info = await transport.sendMail({
          from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          ...(mail.html === undefined ? {} : { html: mail.html }),
          ...(mail.messageId === undefined ? {} : { messageId: mail.messageId }),
          headers: mail.headers ?? {},
          attachments: (mail.images ?? []).map((image) => ({
            cid: image.cid,
            filename: image.filename,
            contentType: image.contentType,
            content: Buffer.from(image.base64, 'base64'),
            contentDisposition: 'inline' as const,
          })),
        })
        logger.info('mail sent', { to: mail.to, subject: mail.subject, message_id: info.messageId })
        return { status: 'sent' }
      } catch (error) {
        const refusal = recipientRefusal(error)
        if (refusal === null) throw error
        logger.warn('mail refused by the SMTP server', { to: mail.to, response: refusal })
        return { status: 'rejected', response: refusal }
      } finally {
        transport.close()
      }
    },
  }
}

/** The server's reply when it refused the recipient permanently (5xx at RCPT TO), else null. */
function recipientRefusal(error: unknown): string | null {
  const e = error as { command?: string; responseCode?: number; response?: string; code?: string }
  const atRcpt = e.command === 'RCPT TO' || e.code === 'EENVELOPE'
  if (!atRcpt || typeof e.responseCode !== 'number') return null
  return e.responseCode >= 500 && e.responseCode < 600 ? (e.response ?? String(e.responseCode)) : null
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
  // The account mails (reset links, invitations) go through the notification transport above; a
  // refused recipient is an error here, as these mails have no suppression list to record it in.
  const transport = createMailTransport(input)
  return {
    async send(mail) {
      const outcome = await transport.send(mail)
      if (outcome.status === 'rejected')
        throw new Error(`the SMTP server refused ${mail.to}: ${outcome.response}`)
    },
    close() {},
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
