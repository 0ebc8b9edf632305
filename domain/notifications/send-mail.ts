import { encodeBase64urlNoPadding, encodeHexLowerCase } from '@oslojs/encoding'
import { hashToken } from '../accounts/api-token.ts'
import type { RandomBytes } from '../shared/random.ts'
import { escapeHtml } from './mail-html.ts'
import type {
  InlineImage,
  MailKind,
  MailSuppressionStore,
  NotificationMail,
  UnsubscribeTokenStore,
} from './mail-ports.ts'

// One notification mail to one recipient (docs/notifications.md "Mail"): skipped when the address
// unsubscribed from its kind or bounced; otherwise sent with a one-click unsubscribe URL of its own
// (RFC 8058 §3: List-Unsubscribe with an https URI and List-Unsubscribe-Post), `Auto-Submitted:
// auto-generated` (RFC 3834 §5: no vacation or other automatic replies), and a Message-ID on the
// service's own domain (RFC 5322 §3.6.4).

/** What the transport sends: an addressed mail with its headers. */
export interface OutgoingMessage {
  to: string
  subject: string
  text: string
  html?: string
  messageId?: string
  headers?: Record<string, string>
  images?: InlineImage[]
}

/**
 * What the SMTP server answered. `rejected`: a permanent refusal of the recipient (a 5xx reply to
 * RCPT TO, RFC 5321 §4.2.1). A temporary failure (4xx, no connection) is thrown, so the job retries.
 */
export type SendOutcome = { status: 'sent' } | { status: 'rejected'; response: string }

export interface MailTransport {
  send(message: OutgoingMessage): Promise<SendOutcome>
}

export interface SendMailDeps {
  suppressions: MailSuppressionStore
  tokens: UnsubscribeTokenStore
  transport: MailTransport
  random: RandomBytes
  now: () => Date
  /** PUBLIC_URL: the unsubscribe URL is on it. */
  publicUrl: string
  /** INGEST_DOMAIN: the right-hand side of Message-IDs. */
  messageDomain: string
}

export type SendResult = 'sent' | 'suppressed' | 'bounced'

export const normaliseRecipient = (address: string) => address.trim().toLowerCase()

export const unsubscribeUrl = (publicUrl: string, token: string) => `${publicUrl}/unsubscribe/${token}`

/** The URL-safe secret of an unsubscribe link: 32 random bytes (256 bits, never guessed). */
export function newUnsubscribeToken(random: RandomBytes): { token: string; hash: string } {
  const token = encodeBase64urlNoPadding(random(32))
  return { token, hash: hashToken(token) }
}

export async function sendNotificationMail(deps: SendMailDeps, mail: NotificationMail): Promise<SendResult> {
  const to = normaliseRecipient(mail.to)
  if (await deps.suppressions.isSuppressed(mail.accountId, to, mail.kind)) return 'suppressed'
  const now = deps.now()
  const { token, hash } = newUnsubscribeToken(deps.random)
  await deps.tokens.issue(hash, { accountId: mail.accountId, recipient: to, kind: mail.kind }, now)
  const url = unsubscribeUrl(deps.publicUrl, token)
  const outcome = await deps.transport.send({
    to,
    subject: mail.subject,
    text: `${mail.text}\nUnsubscribe from ${kindLabel(mail.kind)}: ${url}\n`,
    html: mail.html.replace(
      '</body>',
      `<p style="text-align:center;font-size:12px;color:#656d76"><a href="${escapeHtml(url)}">Unsubscribe from ${kindLabel(mail.kind)}</a></p></body>`,
    ),
    messageId: `<${encodeHexLowerCase(deps.random(16))}@${deps.messageDomain}>`,
    headers: {
      'List-Unsubscribe': `<${url}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'Auto-Submitted': 'auto-generated',
    },
    ...(mail.images === undefined ? {} : { images: mail.images }),
  })
  if (outcome.status === 'sent') return 'sent'
  await deps.suppressions.bounced(mail.accountId, to, outcome.response, now)
  return 'bounced'
}

export const kindLabel = (kind: MailKind) => (kind === 'alerts' ? 'alert emails' : 'the digest')
