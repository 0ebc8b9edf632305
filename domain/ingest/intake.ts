import type { Result } from '../shared/result.ts'

// Every intake path (HTTP, CLI pipe, IMAP poller, SMTP/LMTP listener) hands a raw RFC 5322 message
// to one function. Accepting is one durable write: the raw message is stored and its parse job
// enqueued in the same transaction, so once `accept` resolves ok, nothing can be lost.

export type IntakeSource = 'http' | 'cli' | 'imap' | 'smtp' | 'dashboard'

/**
 * A message read to its end before it is accepted (spooled by the intake: docs/ingestion.md,
 * "Memory"): its size and SHA-256 are known, and its bytes can be read again, in pieces.
 */
export interface SpooledMessage {
  size: number
  sha256: string
  /** The bytes in order, in pieces; can be called more than once. */
  pieces(): AsyncIterable<Uint8Array>
}

export interface AcceptInput {
  /** The message: in memory, or spooled (large messages are never held whole). */
  raw: Uint8Array | SpooledMessage
  /** The envelope recipient (or Delivered-To / X-Original-To / To as a fallback); routes to an account. */
  recipient: string | null
  source: IntakeSource
  /** Set when the caller authenticated as an account (an API token): the report goes to it. */
  accountId?: string
  /**
   * The caller processes the message itself right after accepting it, to give its outcome (the
   * raw-report endpoint, `cli import`, the dashboard upload). The queued job then only stands in for
   * a caller that died first: it starts after a delay and finds the message already processed.
   */
  processInline?: boolean
  /**
   * When the message arrived where the intake path found it, if that was before this intake: the
   * IMAP server's INTERNALDATE (RFC 9051 §2.3.3), since a mailbox may hold messages for days before
   * a poll. Other paths receive the message themselves: their intake time is the arrival.
   */
  arrivedAt?: Date
}

export interface Accepted {
  id: string
  accountId: string
}

/**
 * Failures: `not_found` (resource `recipient`) when the address is no account's report address,
 * `payload_too_large` over INGEST_MAX_MESSAGE_BYTES. Retryable infrastructure trouble throws.
 */
export type AcceptMessage = (input: AcceptInput) => Promise<Result<Accepted>>

/** Whether an address is some account's report address (SMTP refuses others at RCPT TO). */
export type KnowsRecipient = (address: string) => Promise<boolean>
