import type { ImapFlow } from 'imapflow'
import { type SpoolResult, spoolMessage } from './message-spool.ts'

// One message of the IMAP poller's (infrastructure/mail/imap-poller.ts), downloaded into the
// intake spool as it arrives.

/** How much of a message one FETCH asks for: most reports arrive in the first, one round trip. */
const DOWNLOAD_CHUNK_BYTES = 1024 * 1024

/**
 * The message, spooled as it is downloaded (never held whole: docs/ingestion.md, "Memory"), or its
 * size when it went over `maxBytes`; null when it was expunged since the listing. Partial FETCHes
 * bound the download even if the server under-reported RFC822.SIZE; imapflow then ends it with
 * `DownloadOverflow` past twice the size it was told, plus one window.
 */
export async function downloadSpooled(
  client: ImapFlow,
  uid: number,
  maxBytes: number,
): Promise<SpoolResult | null> {
  const { content } = await client.download(String(uid), undefined, {
    uid: true,
    maxBytes: maxBytes + 1,
    chunkSize: DOWNLOAD_CHUNK_BYTES,
  })
  if (content === undefined) return null
  try {
    return await spoolMessage(content, { maxBytes })
  } finally {
    // Stops the chunk FETCHes when the spool stopped reading (over the limit, or an error).
    content.destroy()
  }
}
