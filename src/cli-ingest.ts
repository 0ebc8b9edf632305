import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { SpooledMessage } from '../domain/ingest/intake.ts'
import { recipientFromHeaders } from '../domain/ingest/routing.ts'
import { CONTROL_CHARACTERS } from '../domain/shared/control-characters.ts'
import type { Failure } from '../domain/shared/result.ts'
import type { Database } from '../infrastructure/db/database.ts'
import { MAX_HEADER_BYTES, parseHeaders } from '../infrastructure/mail/header-recipient.ts'
import { handOff, INTAKE_SOCKET_FILE } from '../infrastructure/mail/intake-socket.ts'
import { firstBytes, spoolMessage } from '../infrastructure/mail/message-spool.ts'
import type { Config } from './config.ts'

// `bun run cli ingest`, the mail server's pipe transport (docs/ingestion.md, "The CLI pipe"). With
// the embedded database and a service running on DATA_DIR, the message is handed to the service over
// its intake socket, so dozens of pipe processes at once cost no database sessions; otherwise (no
// service, or PostgreSQL) the CLI stores it with its own session.

/** sysexits.h: the mail server keeps the message and tries again later. */
export const EX_TEMPFAIL = 75

export interface IngestMessage {
  /** Spooled as it was read (docs/ingestion.md, "Memory"); null when it passed the limit. */
  raw: SpooledMessage | null
  recipient: string | null
}

export type IngestOutcome =
  | { ok: true; output: string }
  /** Refused for good (exit 1: the mail server bounces it). */
  | { ok: false; refused: string }
  /** Not stored now (exit 75: the mail server retries). */
  | { ok: false; notStored: string }

/**
 * Stdin, spooled: a message is never held whole, and reading stops as soon as it passes
 * INGEST_MAX_MESSAGE_BYTES (the mail server then bounces it). The spool's file lives in a directory
 * of this process, removed when it exits, whichever way the message went (stored, refused, the
 * database busy).
 */
export async function readMessage(config: Config, given: string | undefined): Promise<IngestMessage> {
  // An empty --recipient (a pipe transport's variable that came out empty) is no recipient: the
  // message's headers name it then, as without the option.
  const recipient = given?.trim() ? given : undefined
  const dir = mkdtempSync(join(tmpdir(), 'dmarcwatch-ingest-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const stdin = Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>
  const spooled = await spoolMessage(stdin, { maxBytes: config.ingestMaxMessageBytes, dir })
  if (!spooled.ok) return { raw: null, recipient: recipient ?? null }
  const headers = parseHeaders(await firstBytes(spooled.spool, MAX_HEADER_BYTES))
  return {
    raw: spooled.spool,
    recipient: recipient ?? recipientFromHeaders(Object.fromEntries(headers), config.ingestDomain) ?? null,
  }
}

const accepted = (id: string): IngestOutcome => ({
  ok: true,
  output: JSON.stringify({ id, status: 'accepted' }),
})

const CONTROLS = new RegExp(CONTROL_CHARACTERS.source, 'g')

/** A value from the command line or a message on one line of the mail server's log, bounded. */
export const printable = (value: string) => value.replace(CONTROLS, '?').slice(0, 300)

function refusal(failure: Failure, recipient: string | null): IngestOutcome {
  if (failure.code === 'not_found')
    return {
      ok: false,
      refused:
        recipient === null
          ? 'not accepted: the message names no report address of this service (give it with --recipient, or in Delivered-To, X-Original-To or To)'
          : `not accepted: ${printable(recipient)} is not a report address of this service`,
    }
  if (failure.code === 'payload_too_large')
    return { ok: false, refused: `not accepted: the message is larger than ${failure.limit} bytes` }
  return { ok: false, refused: `not accepted: ${failure.code}` }
}

const tooLarge = (config: Config): IngestOutcome =>
  refusal({ code: 'payload_too_large', limit: config.ingestMaxMessageBytes }, null)

/**
 * Through the running service's intake socket; null when no service serves DATA_DIR. A message
 * over the limit is refused here, with no service or database asked.
 */
export async function ingestThroughService(
  config: Config,
  message: IngestMessage,
): Promise<IngestOutcome | null> {
  if (message.raw === null) return tooLarge(config)
  if (config.databaseUrl !== null) return null
  const path = join(resolve(config.dataDir), INTAKE_SOCKET_FILE)
  const result = await handOff(
    path,
    { raw: message.raw, recipient: message.recipient },
    { maxMessageBytes: config.ingestMaxMessageBytes },
  )
  switch (result.outcome) {
    case 'no_service':
      return null
    case 'accepted':
      return accepted(result.id)
    case 'refused':
      return refusal(result.failure, message.recipient)
    case 'not_stored':
      return { ok: false, notStored: `not stored, try again later: ${result.reason}` }
  }
}

/** With this process's own database session (the message row and its job in one transaction). */
export async function ingestWithDatabase(
  config: Config,
  database: Database,
  message: IngestMessage,
): Promise<IngestOutcome> {
  if (message.raw === null) return tooLarge(config)
  const { startBoss } = await import('../infrastructure/queue/pg-boss.ts')
  const { intake } = await import('./compose.ts')
  const { createQueues } = await import('../infrastructure/queue/catalogue.ts')
  const now = new Date()
  const boss = await startBoss(database, { background: false })
  try {
    await createQueues(boss)
    const { accept } = intake({ config, database, boss, now: () => now })
    const result = await accept({ raw: message.raw, recipient: message.recipient, source: 'cli' })
    return result.ok ? accepted(result.value.id) : refusal(result.failure, message.recipient)
  } finally {
    await boss.stop({ graceful: false })
  }
}
