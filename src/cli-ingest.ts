import { join, resolve } from 'node:path'
import { recipientFromHeaders } from '../domain/ingest/routing.ts'
import type { Failure } from '../domain/shared/result.ts'
import type { Database } from '../infrastructure/db/database.ts'
import { parseHeaders } from '../infrastructure/mail/header-recipient.ts'
import { handOff, INTAKE_SOCKET_FILE } from '../infrastructure/mail/intake-socket.ts'
import type { Config } from './config.ts'

// `bun run cli ingest`, the mail server's pipe transport (docs/ingestion.md, "The CLI pipe"). With
// the embedded database and a service running on DATA_DIR, the message is handed to the service over
// its intake socket, so dozens of pipe processes at once cost no database sessions; otherwise (no
// service, or PostgreSQL) the CLI stores it with its own session.

/** sysexits.h: the mail server keeps the message and tries again later. */
export const EX_TEMPFAIL = 75

export interface IngestMessage {
  raw: Uint8Array
  recipient: string | null
}

export type IngestOutcome =
  | { ok: true; output: string }
  /** Refused for good (exit 1: the mail server bounces it). */
  | { ok: false; refused: string }
  /** Not stored now (exit 75: the mail server retries). */
  | { ok: false; notStored: string }

export async function readMessage(config: Config, recipient: string | undefined): Promise<IngestMessage> {
  const raw = new Uint8Array(await new Response(Bun.stdin.stream()).arrayBuffer())
  return {
    raw,
    recipient:
      recipient ?? recipientFromHeaders(Object.fromEntries(parseHeaders(raw)), config.ingestDomain) ?? null,
  }
}

const accepted = (id: string): IngestOutcome => ({
  ok: true,
  output: JSON.stringify({ id, status: 'accepted' }),
})

function refusal(failure: Failure, recipient: string | null): IngestOutcome {
  if (failure.code === 'not_found')
    return {
      ok: false,
      refused: `not accepted: ${recipient ?? 'no recipient'} is not a report address of this service`,
    }
  if (failure.code === 'payload_too_large')
    return { ok: false, refused: `not accepted: the message is larger than ${failure.limit} bytes` }
  return { ok: false, refused: `not accepted: ${failure.code}` }
}

/** Through the running service's intake socket; null when no service serves DATA_DIR. */
export async function ingestThroughService(
  config: Config,
  message: IngestMessage,
): Promise<IngestOutcome | null> {
  if (config.databaseUrl !== null) return null
  const path = join(resolve(config.dataDir), INTAKE_SOCKET_FILE)
  const result = await handOff(path, message, { maxMessageBytes: config.ingestMaxMessageBytes })
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
