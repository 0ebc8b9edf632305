import type { Severity } from '../shared/finding.ts'
import { renderAlertMail } from './alert-mail.ts'
import type { AccountMembers, AlertMailQueue, NotificationMail } from './mail-ports.ts'
import { atLeast } from './settings.ts'

// The alert email of an account's burst (docs/notifications.md "Mail"): the alert changes the relay
// queued since the last mail, those at or above the account's threshold, in one mail per recipient.
// Changes below the threshold are marked too: they are not mailed later either. With alert emails
// off, every change is taken and marked without a mail, so turning them back on does not mail the
// backlog of the time they were off (docs/notifications.md "Alert emails").

/** The part of the account's notification settings alert emails read. */
export interface AlertEmailSettings {
  alertEmail: { enabled: boolean; minSeverity: Severity; recipients: readonly string[] }
}

export interface AlertEmailSettingsReader {
  get(accountId: string): Promise<AlertEmailSettings>
}

export interface AlertMailDeps {
  queue: AlertMailQueue
  settings: AlertEmailSettingsReader
  members: AccountMembers
  publicUrl: string
  now: () => Date
}

/** Recipients as set, or the account's members when the setting names none. */
export async function recipientsOf(
  members: AccountMembers,
  accountId: string,
  configured: readonly string[],
): Promise<string[]> {
  const list = configured.length > 0 ? configured : await members.emails(accountId)
  return [...new Set(list.map((r) => r.trim().toLowerCase()))].filter((r) => r !== '')
}

export async function mailAlertBurst(
  deps: AlertMailDeps,
  accountId: string,
): Promise<{ changes: number; mails: number }> {
  // Read before the queue's transaction: on the embedded database (one session) a read outside a
  // transaction waits for it to end.
  const { alertEmail } = await deps.settings.get(accountId)
  const to = alertEmail.enabled ? await recipientsOf(deps.members, accountId, alertEmail.recipients) : []
  return deps.queue.takePending(accountId, deps.now(), (pending) => {
    if (!alertEmail.enabled) return []
    const wanted = pending.filter((p) => atLeast(p.alert.severity, alertEmail.minSeverity))
    if (wanted.length === 0) return []
    const rendered = renderAlertMail(wanted, deps.publicUrl)
    return to.map(
      (recipient): NotificationMail => ({ ...rendered, accountId, kind: 'alerts', to: recipient }),
    )
  })
}
