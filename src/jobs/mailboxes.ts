import type { AcceptMessage } from '../../domain/ingest/intake.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { POLL_MAILBOXES } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

/**
 * Every minute one worker (pg-boss runs a cron once across processes, and the queue is singleton)
 * polls each configured mailbox. Messages are archived only after they are stored. Without
 * mailboxes nothing is scheduled.
 */
export function mailboxJobs(
  deps: { accept: AcceptMessage; logger: Logger },
  options: { urls: string[]; archiveFolder: string; rejectedFolder: string; maxMessageBytes: number },
): JobHandler[] {
  if (options.urls.length === 0) return []
  return [
    handle(POLL_MAILBOXES, async () => {
      // Loaded on first use: the IMAP client and its logger are ~5 MB of a service's resident
      // memory and ~1 MB of the heap every full collection marks (docs/operations.md, "Sizing").
      const { pollMailbox } = await import('../../infrastructure/mail/imap-poller.ts')
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
    }),
  ]
}
