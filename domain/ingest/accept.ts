import { fail, ok, type Result } from '../shared/result.ts'
import type { Accepted, AcceptInput, IntakeSource, SpooledMessage } from './intake.ts'
import { ingestKeyOf } from './routing.ts'

export interface NewIngestMessage {
  accountId: string
  source: IntakeSource
  recipient: string | null
  /** The bytes, with their size and SHA-256; stored in pieces when large. */
  body: SpooledMessage
  receivedAt: Date
  /** Delay the processing job: the caller processes the message at once (AcceptInput.processInline). */
  deferJob: boolean
}

export interface IngestMessageStore {
  accountByIngestKey(key: string): Promise<string | null>
  /** Stores the raw message and enqueues its processing in one transaction. */
  insertAndEnqueue(message: NewIngestMessage): Promise<string>
}

/**
 * When the message arrived (docs/ingestion.md "Intake paths"): the arrival the intake path saw, or
 * now. A date in the future (a server's clock) or an invalid one is not believed.
 */
export function arrival(arrivedAt: Date | undefined, now: Date): Date {
  if (arrivedAt === undefined || Number.isNaN(arrivedAt.getTime())) return now
  return arrivedAt.getTime() > now.getTime() ? now : arrivedAt
}

/**
 * The one durable write of report intake (docs/ingestion.md). A message addressed to no account's report
 * address is refused (`not_found` recipient); an authenticated caller's message goes to its account.
 */
export async function acceptMessage(
  deps: {
    messages: IngestMessageStore
    ingestDomain: string
    maxBytes: number
    sha256: (bytes: Uint8Array) => string
    now: () => Date
  },
  input: AcceptInput,
): Promise<Result<Accepted>> {
  const body = spooled(input.raw, deps.sha256)
  if (body.size > deps.maxBytes) return fail({ code: 'payload_too_large', limit: deps.maxBytes })
  if (body.size === 0) {
    return fail({
      code: 'validation_failed',
      message: 'The message is empty.',
      errors: { body: ['The message is empty.'] },
    })
  }
  let accountId = input.accountId ?? null
  if (accountId === null) {
    const key = input.recipient === null ? null : ingestKeyOf(input.recipient, deps.ingestDomain)
    accountId = key === null ? null : await deps.messages.accountByIngestKey(key)
    if (accountId === null) return fail({ code: 'not_found', resource: 'recipient' })
  }
  const id = await deps.messages.insertAndEnqueue({
    accountId,
    source: input.source,
    recipient: input.recipient,
    body,
    receivedAt: arrival(input.arrivedAt, deps.now()),
    deferJob: input.processInline === true,
  })
  return ok({ id, accountId })
}

/** A message held in memory, as the store takes every message. */
function spooled(raw: Uint8Array | SpooledMessage, sha256: (bytes: Uint8Array) => string): SpooledMessage {
  if (!(raw instanceof Uint8Array)) return raw
  let digest: string | null = null
  return {
    size: raw.byteLength,
    get sha256() {
      digest ??= sha256(raw)
      return digest
    },
    async *pieces() {
      yield raw
    },
  }
}
