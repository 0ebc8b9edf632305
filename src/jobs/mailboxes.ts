import type { PgBoss } from 'pg-boss'
import type { AcceptMessage } from '../../domain/ingest/intake.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { pollMailbox } from '../../infrastructure/mail/imap-poller.ts'

export const POLL_MAILBOXES = 'ingest.poll-mailboxes'

/**
 * Every minute one worker (pg-boss runs a cron once across processes, and the queue is singleton)
 * polls each configured mailbox. Messages are archived only after they are stored.
 */
export async function registerMailboxPolling(
  boss: PgBoss,
  deps: { accept: AcceptMessage; logger: Logger },
  options: { urls: string[]; archiveFolder: string; rejectedFolder: string; maxMessageBytes: number },
): Promise<void> {
  if (options.urls.length === 0) return
  await boss.schedule(POLL_MAILBOXES, '* * * * *')
  await boss.work(POLL_MAILBOXES, async () => {
    for (const url of options.urls) {
      const result = await pollMailbox(deps, {
        url,
        archiveFolder: options.archiveFolder,
        rejectedFolder: options.rejectedFolder,
        maxMessageBytes: options.maxMessageBytes,
      })
      const mailbox = url.replace(/\/\/[^@]*@/, '//')
      deps.logger.info('mailbox polled', { mailbox, ...result })
    }
  })
}
