import { ImapFlow } from 'imapflow'
import type { AcceptMessage } from '../../domain/ingest/intake.ts'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import { headerRecipient, MAX_HEADER_BYTES } from './header-recipient.ts'
import { downloadSpooled } from './imap-download.ts'
import { parseImapUrl } from './imap-url.ts'
import { firstBytes, type Spool, type SpoolResult } from './message-spool.ts'

// Intake from a mailbox that reporters (or a forward) deliver to. Every message in the folder is
// pending — read or unread does not matter, a human may have opened one — and it leaves the folder
// only once its fate is durable: moved to the archive folder after `accept` committed it, or to
// the rejected folder when `accept` refused it for good. Anything else leaves it where it is, and
// the next poll tries again.
//
// Crash window: if the process dies (or the MOVE fails) after `accept` resolved ok but before the
// message was moved, the next poll accepts the same message again. That is safe because the
// pipeline deduplicates reports by the hash of their content, so a second accept of the same bytes
// produces no second report. The opposite order (move, then accept) could lose a message; this
// order can at worst repeat one.

export interface ImapMailbox {
  /** `imap://user:pass@host:port/INBOX` (STARTTLS when offered) or `imaps://…` (TLS from the start). */
  url: string
  /** Where accepted messages go (default `Archive`); created when missing. */
  archiveFolder?: string
  /** Where refused and oversize messages go (default `Rejected`); created when missing. */
  rejectedFolder?: string
  /** The recipient of every message in this mailbox; otherwise read from the message headers. */
  recipient?: string
  /** At most this many messages per poll, oldest first (default 100). */
  maxMessages?: number
  /**
   * Larger messages are moved to the rejected folder (default 64 MiB): unread when the server's
   * RFC822.SIZE says so, otherwise as soon as the download passes it.
   */
  maxMessageBytes?: number
  tls?: { rejectUnauthorized?: boolean }
  /** Connect, greeting and socket-inactivity timeout (default 30 s). */
  timeoutMs?: number
  /**
   * The whole poll's time (default 240 s): past it the connection is closed and the poll ends with
   * an error; what it stored stays stored and archived, the rest waits for the next poll.
   */
  deadlineMs?: number
}

export const DEFAULT_POLL_DEADLINE_MS = 240_000

const DEFAULT_MAX_MESSAGES = 100
const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024

/**
 * `fetched` = `accepted` (archived) + `rejected` (moved to the rejected folder) + `failed` (left in
 * the folder for the next poll). `error` says why a poll stopped early, when it did.
 */
export interface PollResult {
  fetched: number
  accepted: number
  rejected: number
  failed: number
  error?: string
}

/** What the listing FETCH gives of each message. */
interface Listed {
  uid: number
  size?: number
  internalDate?: Date | string
}

type Outcome = 'accepted' | 'rejected' | 'vanished' | { failed: string; stop: boolean }

interface Context {
  deps: { accept: AcceptMessage; logger: Logger }
  client: ImapFlow
  recipient: string | undefined
  archive: string
  rejected: string
  maxBytes: number
}

/** imapflow puts the server's NO/BAD text in `responseText`; `message` alone says "Command failed". */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const text = (error as { responseText?: unknown }).responseText
  return typeof text === 'string' && text ? `${error.message}: ${text}` : error.message
}

function internalDateOf(fetched: { internalDate?: Date | string }): Date | undefined {
  const value = fetched.internalDate
  if (value === undefined) return undefined
  const date = value instanceof Date ? value : new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** MOVE by UID; sequence numbers shift as earlier messages leave the folder. */
async function move(ctx: Context, uid: number, folder: string): Promise<boolean> {
  const moved = await ctx.client.messageMove(String(uid), folder, { uid: true })
  return moved !== false && moved !== undefined
}

async function reject(
  ctx: Context,
  uid: number,
  reason: string,
  fields: Record<string, unknown>,
): Promise<Outcome> {
  if (!(await move(ctx, uid, ctx.rejected))) {
    return { failed: `could not move message ${uid} to ${ctx.rejected}`, stop: true }
  }
  ctx.deps.logger.warn(`imap message rejected: ${reason}`, { uid, folder: ctx.rejected, ...fields })
  return 'rejected'
}

async function processMessage(ctx: Context, listed: Listed): Promise<Outcome> {
  const { deps, maxBytes } = ctx
  const { uid, size } = listed
  if (size !== undefined && size > maxBytes) {
    return reject(ctx, uid, 'over the size limit', { bytes: size, limit: maxBytes })
  }
  let spooled: SpoolResult | null
  try {
    spooled = await downloadSpooled(ctx.client, uid, ctx.maxBytes)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    // Retrying cannot help a message larger than its server says: left in the folder, it stopped
    // every poll at it, and nothing after it was ever read.
    if (code === 'DownloadOverflow')
      return reject(ctx, uid, 'larger than the server said', { listed_bytes: size, limit: maxBytes })
    if (code !== 'DownloadIncomplete') throw error
    spooled = null
  }
  if (spooled === null) {
    // Expunged by another client since the listing (or during the download): not ours to count,
    // and nothing lost by us.
    deps.logger.info('imap message vanished before it was downloaded', { uid })
    return 'vanished'
  }
  if (!spooled.ok) {
    return reject(ctx, uid, 'over the size limit', { bytes: spooled.size, limit: maxBytes })
  }
  const raw = spooled.spool
  try {
    return await acceptAndFile(ctx, listed, raw)
  } finally {
    await raw.discard()
  }
}

async function acceptAndFile(ctx: Context, listed: Listed, raw: Spool): Promise<Outcome> {
  const { deps } = ctx
  const { uid } = listed
  const recipient = ctx.recipient ?? headerRecipient(await firstBytes(raw, MAX_HEADER_BYTES))
  let result: Awaited<ReturnType<AcceptMessage>>
  try {
    // INTERNALDATE: when the server received the message, which may be long before this poll.
    result = await deps.accept({ raw, recipient, source: 'imap', arrivedAt: internalDateOf(listed) })
  } catch (error) {
    // Retryable trouble (the database is down): the message stays, and so do the ones after it.
    deps.logger.error('imap message not accepted, will retry on the next poll', {
      uid,
      ...errorFields(error),
    })
    return { failed: `accept failed: ${describe(error)}`, stop: true }
  }
  if (!result.ok) {
    // Failures are permanent by contract (retryable trouble throws), so retrying cannot help.
    return reject(ctx, uid, result.failure.code, { recipient, failure: result.failure })
  }
  if (!(await move(ctx, uid, ctx.archive))) {
    return {
      failed: `message ${uid} was accepted as ${result.value.id} but could not be moved to ${ctx.archive}; the next poll accepts it again (deduplicated by content hash)`,
      stop: true,
    }
  }
  deps.logger.info('imap message accepted', {
    uid,
    id: result.value.id,
    account_id: result.value.accountId,
    recipient,
    bytes: raw.size,
  })
  return 'accepted'
}

async function processFolder(ctx: Context, folder: string, maxMessages: number, result: PollResult) {
  const { client } = ctx
  const opened = client.mailbox
  const exists = opened ? opened.exists : 0
  if (exists === 0) return
  // Sequence numbers run in UID (arrival) order, so 1:n are the n oldest messages.
  const count = Math.min(exists, Math.max(1, maxMessages))
  const listed: Listed[] = await client.fetchAll(`1:${count}`, { uid: true, size: true, internalDate: true })
  listed.sort((a, b) => a.uid - b.uid)
  for (const message of listed) {
    let outcome: Outcome
    try {
      outcome = await processMessage(ctx, message)
    } catch (error) {
      // A server or connection error mid-message: the message was not moved, so it is retried.
      outcome = { failed: `IMAP error on message ${message.uid}: ${describe(error)}`, stop: true }
    }
    if (outcome === 'vanished') continue
    result.fetched++
    if (outcome === 'accepted') result.accepted++
    else if (outcome === 'rejected') result.rejected++
    else {
      result.failed++
      ctx.deps.logger.warn('imap message left in the folder', {
        uid: message.uid,
        folder,
        reason: outcome.failed,
      })
      if (outcome.stop) {
        result.error = outcome.failed
        return
      }
    }
  }
}

export async function pollMailbox(
  deps: { accept: AcceptMessage; logger: Logger },
  mailbox: ImapMailbox,
): Promise<PollResult> {
  const result: PollResult = { fetched: 0, accepted: 0, rejected: 0, failed: 0 }
  const target = parseImapUrl(mailbox.url)
  if (!target.ok) {
    result.error = target.failure.code === 'validation_failed' ? target.failure.message : 'invalid IMAP URL'
    deps.logger.error('imap poll not started', { error: result.error })
    return result
  }
  const { host, port, secure, user, pass, folder } = target.value
  const timeout = mailbox.timeoutMs ?? 30_000
  const client = new ImapFlow({
    host,
    port,
    secure,
    auth: { user, pass },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    ...(mailbox.tls ? { tls: mailbox.tls } : {}),
  })
  // Without a listener, an 'error' event (a reset socket) would be thrown and crash the process.
  client.on('error', (error: unknown) =>
    deps.logger.warn('imap connection error', { host, ...errorFields(error) }),
  )
  const ctx: Context = {
    deps,
    client,
    recipient: mailbox.recipient,
    archive: mailbox.archiveFolder ?? 'Archive',
    rejected: mailbox.rejectedFolder ?? 'Rejected',
    maxBytes: mailbox.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
  }
  // The inactivity timeout restarts with every byte: a server that trickles a byte every few
  // seconds held a poll, and every poll after it (the job is a singleton), for good (a hostile-input
  // sweep). Closing the socket ends whatever command waits on it.
  const deadlineMs = mailbox.deadlineMs ?? DEFAULT_POLL_DEADLINE_MS
  let pastDeadline = false
  const deadline = setTimeout(() => {
    pastDeadline = true
    client.close()
  }, deadlineMs)
  try {
    await client.connect()
    // CREATE answers ALREADYEXISTS for an existing folder, which imapflow reports as created: false.
    for (const destination of [ctx.archive, ctx.rejected]) await client.mailboxCreate(destination)
    const lock = await client.getMailboxLock(folder)
    try {
      await processFolder(ctx, folder, mailbox.maxMessages ?? DEFAULT_MAX_MESSAGES, result)
    } finally {
      lock.release()
    }
  } catch (error) {
    result.error = `IMAP ${host}:${port}: ${describe(error)}`
    deps.logger.error('imap poll failed', { host, port, user, folder, ...errorFields(error) })
  } finally {
    clearTimeout(deadline)
    // Whatever command the closed socket ended, the reason is the deadline.
    if (pastDeadline)
      result.error = `IMAP ${host}:${port}: the poll took longer than ${deadlineMs} ms and was ended`
    try {
      await client.logout()
    } catch {
      client.close()
    }
  }
  const level = result.error === undefined ? 'info' : 'warn'
  deps.logger[level]('imap poll finished', { host, folder, ...result })
  return result
}
