import type { AcceptMessage } from '../../domain/ingest/intake.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { POLL_MAILBOXES } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

const JOB_BUDGET_MS = 540_000

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
      const { DEFAULT_POLL_DEADLINE_MS, pollMailbox } = await import(
        '../../infrastructure/mail/imap-poller.ts'
      )
      // Every poll ends before the job expires (POLL_MAILBOXES: 600 s; a minute kept for the
      // logout), so the next minute's job runs; mailboxes left out are polled then.
      const endAt = Date.now() + JOB_BUDGET_MS
      for (const url of options.urls) {
        const mailbox = url.replace(/\/\/[^@]*@/, '//')
        const left = endAt - Date.now()
        if (left <= 0) {
          deps.logger.warn('mailbox not polled: the job has no time left', { mailbox })
          continue
        }
        const result = await pollMailbox(deps, {
          url,
          archiveFolder: options.archiveFolder,
          rejectedFolder: options.rejectedFolder,
          maxMessageBytes: options.maxMessageBytes,
          deadlineMs: Math.min(DEFAULT_POLL_DEADLINE_MS, left),
        })
        deps.logger.info('mailbox polled', { mailbox, ...result })
      }
    }),
  ]
}
