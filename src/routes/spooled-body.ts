import { type Spool, spoolBody } from '../../infrastructure/mail/message-spool.ts'
import { FailureError } from '../../plugins/failures.ts'

/**
 * Runs `use` with the request's body spooled, never held whole (docs/ingestion.md, "Memory"): 413
 * `payload_too_large` once it passes `maxBytes` (a declared Content-Length over the route's limit is
 * refused before, by plugins/body-limit.ts), and the spool discarded after, whatever `use` did.
 */
export async function withSpooledBody<T>(
  request: Request,
  maxBytes: number,
  use: (spool: Spool) => Promise<T>,
): Promise<T> {
  const spooled = await spoolBody(request.body, { maxBytes })
  if (!spooled.ok) throw new FailureError({ code: 'payload_too_large', limit: maxBytes })
  try {
    return await use(spooled.spool)
  } finally {
    await spooled.spool.discard()
  }
}
