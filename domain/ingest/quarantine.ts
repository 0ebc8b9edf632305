import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, ok, type Result } from '../shared/result.ts'

// Messages the report job could not process are quarantined with a reason, never dropped
// (docs/ingestion.md); the account lists them and sends one back to the queue after a fix. The
// store is infrastructure/repositories/pg-ingest-message-store.ts.

/** A quarantined message as the account sees it (never its bytes). */
export interface QuarantinedMessage {
  id: string
  source: string
  recipient: string | null
  size: number
  receivedAt: Date
  code: string
  reason: string
}

export interface QuarantineStore {
  /** The account's quarantined messages, newest first. */
  listQuarantine(accountId: string, page: PageRequest): Promise<Page<QuarantinedMessage>>
  /** Puts a quarantined message back in the queue; false when it is not one of the account's. */
  retry(accountId: string, id: string): Promise<boolean>
  /** How many of the account's messages wait for `domain` to be verified. */
  waitingFor(accountId: string, domain: string): Promise<number>
}

/** Sends a quarantined message back to the job queue; another account's, or none, is `not_found`. */
export async function retryQuarantined(
  deps: { messages: Pick<QuarantineStore, 'retry'> },
  input: { accountId: string; id: string },
): Promise<Result<{ id: string }>> {
  if (!(await deps.messages.retry(input.accountId, input.id)))
    return fail({ code: 'not_found', resource: 'quarantined message' })
  return ok({ id: input.id })
}
