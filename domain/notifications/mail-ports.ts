import type { StoredAlert } from '../alerts/ports.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'

// Notification mail (issue #21, docs/notifications.md "Mail"): what the mail jobs read and write.
// Implemented by infrastructure/repositories/pg-notification-mail-store.ts; the transport by
// infrastructure/mail/mail-sender.ts.

/** What a recipient can unsubscribe from, one kind at a time (RFC 8058: one URL per list). */
export type MailKind = 'alerts' | 'digest'

/** An image shown inline (a `cid:` reference in the HTML, RFC 2392). */
export interface InlineImage {
  cid: string
  filename: string
  contentType: string
  base64: string
}

/** One rendered notification, before it is addressed. */
export interface RenderedMail {
  subject: string
  html: string
  text: string
  images?: InlineImage[]
}

/** One notification to one recipient: what the send job carries. */
export interface NotificationMail extends RenderedMail {
  accountId: string
  kind: MailKind
  to: string
}

export interface MailSuppressionStore {
  /** Unsubscribed from `kind`, or bounced permanently (every kind). */
  isSuppressed(accountId: string, recipient: string, kind: MailKind): Promise<boolean>
  /** A permanent bounce: no kind is sent to the address again. */
  bounced(accountId: string, recipient: string, detail: string, now: Date): Promise<void>
}

/** What a suppression covers: one kind of mail (an unsubscribe), or every kind (a bounce). */
export const SUPPRESSION_KINDS = ['alerts', 'digest', 'all'] as const

/** A suppression as the account sees it (docs/notifications.md, "Unsubscribe"). */
export interface MailSuppression {
  recipient: string
  /** `all` after a permanent bounce. */
  kind: (typeof SUPPRESSION_KINDS)[number]
  reason: 'unsubscribed' | 'bounced'
  /** The mail server's answer, for a bounce. */
  detail: string | null
  at: Date
}

/** The account's suppressions, listed and lifted by its members. */
export interface MailSuppressionList {
  /** Newest first (then by address and kind), a page of them. */
  list(accountId: string, page: PageRequest): Promise<Page<MailSuppression>>
  /** Lifts an address's suppressions (of `kind`, or every one when null); how many were lifted. */
  lift(accountId: string, recipient: string, kind: MailSuppression['kind'] | null): Promise<number>
}

export interface UnsubscribeTarget {
  accountId: string
  recipient: string
  kind: MailKind
}

export interface UnsubscribeTokenStore {
  /** Records a token (its hash) that unsubscribes `target`. */
  issue(tokenHash: string, target: UnsubscribeTarget, now: Date): Promise<void>
  /** What the token unsubscribes, or null for an unknown token. */
  find(tokenHash: string): Promise<UnsubscribeTarget | null>
  /** Records the suppression the token stands for; the target, or null for an unknown token. */
  unsubscribe(tokenHash: string, now: Date): Promise<UnsubscribeTarget | null>
}

/** An alert change waiting for its account's next alert email. */
export interface PendingAlertMail {
  queueId: number
  change: 'created' | 'resolved'
  alert: StoredAlert
}

export interface AlertMailQueue {
  /**
   * In one transaction: the account's alert changes not yet mailed (oldest first, locked), the mails
   * `compose` makes of them enqueued (one send job each), and every change taken marked mailed. A
   * failure rolls all of it back, so a change is mailed once and never lost. `compose` is pure: the
   * transaction is open while it runs.
   */
  takePending(
    accountId: string,
    now: Date,
    compose: (pending: PendingAlertMail[]) => NotificationMail[],
  ): Promise<{ changes: number; mails: number }>
}

/** The notification queue: one job per mail. */
export interface MailOutbox {
  enqueue(mails: NotificationMail[]): Promise<void>
}

/** The recipients an account's notifications go to when its settings name none: its members. */
export interface AccountMembers {
  emails(accountId: string): Promise<string[]>
}
