import {
  SMTPServer,
  type SMTPServerDataResult,
  type SMTPServerDataStream,
  type SMTPServerSession,
} from 'smtp-server'
import type { Accepted, AcceptMessage, KnowsRecipient, SpooledMessage } from '../../domain/ingest/intake.ts'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import type { Failure, Result } from '../../domain/shared/result.ts'
import { connectionsPerClient } from '../runtime/connections-per-client.ts'
import { type Spool, spoolMessage } from './message-spool.ts'
import { sessionDeadlines } from './smtp-connections.ts'

// The MX (or, behind Postfix/Exim, the LMTP endpoint) of the report domain. Reporters do not
// authenticate, so anyone may connect; what keeps it from being an open relay is that only report
// addresses are accepted at RCPT TO, and nothing is ever relayed. A 250 after DATA is a promise to
// the sending MTA that the message is safe, so it is given only after `accept` committed it; until
// then every problem is a 4xx the sender retries.
//
// The message is handed on exactly as received: no Received or Return-Path header is prepended.
// A sender that retries after a 451 (or after a lost 250) sends the same bytes again, and the
// pipeline deduplicates by content hash, which a timestamped trace header would defeat.

export interface SmtpListenerOptions {
  host: string
  /** 0 picks a free port. */
  port: number
  /** LMTP (RFC 2033): LHLO, and one reply per recipient after DATA. */
  lmtp: boolean
  /** Advertised with SIZE; larger messages are refused with 552 and never buffered in full. */
  maxMessageBytes: number
  /** The name in the greeting and EHLO reply (default: the OS hostname). */
  hostname?: string
  /** Offers STARTTLS with this PEM key and certificate; without it STARTTLS is not offered. */
  tls?: { key: string; cert: string }
  /** An idle connection is closed after this long (default 2 minutes). */
  idleTimeoutMs?: number
  /** The domain this MX serves (INGEST_DOMAIN): `postmaster@` it is accepted (RFC 5321 §4.5.1). */
  domain?: string
  /** Concurrent connections (default 100). */
  maxClients?: number
  /**
   * Concurrent connections from one address, an IPv6 one counted by its /56 (default 10): the
   * idle timeout restarts with every byte, so one host trickling a byte a second on 100
   * connections shut every other client out.
   */
  maxClientsPerAddress?: number
  /**
   * The longest a connection may stay open, whatever it does (default 30 minutes): the idle
   * timeout alone let a byte every two minutes hold a connection for ever. 30 minutes moves the
   * largest message allowed (64 MB by default) at 36 KB/s.
   */
  sessionTimeoutMs?: number
}

export interface SmtpListener {
  port: number
  close(): Promise<void>
}

interface Deps {
  accept: AcceptMessage
  knowsRecipient: KnowsRecipient
  logger: Logger
}

function reply(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code })
}

/**
 * The message, spooled (never held whole: docs/ingestion.md, "Memory"), or null when it went over
 * the cap. The rest of an oversize message is drained, not kept.
 */
async function readCapped(stream: SMTPServerDataStream, cap: number): Promise<Spool | null> {
  const spooled = await spoolMessage(stream as AsyncIterable<Buffer>, { maxBytes: cap, drain: true })
  // A stream that stopped without its end (the client vanished) must never pass for a whole message.
  if (!stream.readableEnded) {
    if (spooled.ok) await spooled.spool.discard()
    throw new Error('the message stream ended before the final dot')
  }
  return spooled.ok ? spooled.spool : null
}

type Delivery =
  | { status: 'ok'; accepted: Accepted }
  | { status: 'failed'; failure: Failure }
  | { status: 'error' }
  /** Mail for the postmaster: logged, not kept (see isPostmaster). */
  | { status: 'logged' }

/**
 * RFC 5321 §4.5.1: an SMTP server MUST accept mail for `postmaster` at the domains it serves and
 * for a bare `<Postmaster>`. This MX holds report addresses only, so such a message is accepted
 * and logged (who sent it, how large), not kept: an operator who wants it reads it at the MTA in
 * front, or points the domain's postmaster elsewhere (docs/ingestion.md).
 */
function postmasterOf(domain: string | undefined) {
  const served = domain?.toLowerCase()
  return (address: string) => {
    const [local = '', at] = address.toLowerCase().split('@', 2)
    return local === 'postmaster' && (at === undefined || at === served)
  }
}

function permanentReply(failure: Failure, limit: number): Error {
  if (failure.code === 'payload_too_large')
    return reply(552, `Message exceeds fixed maximum message size ${limit}`)
  if (failure.code === 'not_found') return reply(550, 'No such report address')
  return reply(550, `Message refused (${failure.code})`)
}

const TEMPORARY = 'Temporary failure, please try again later'

/**
 * SMTP has one reply for all recipients. Any temporary error → 451 for the whole message (the
 * sender retries all recipients; those already accepted are deduplicated). Otherwise 250 when at
 * least one recipient took it, since 5xx would bounce a message some recipients already hold.
 */
function smtpReply(deliveries: Delivery[], limit: number): Error | string {
  if (deliveries.some((d) => d.status === 'error')) return reply(451, TEMPORARY)
  const accepted = deliveries.flatMap((d) => (d.status === 'ok' ? [d.accepted.id] : []))
  if (accepted.length > 0) return `OK: accepted as ${accepted.join(', ')}`
  // A report refused for good is bounced even beside a postmaster copy, which is not kept anyway.
  const failed = deliveries.find((d) => d.status === 'failed')
  if (failed?.status === 'failed') return permanentReply(failed.failure, limit)
  return deliveries.some((d) => d.status === 'logged')
    ? 'OK: postmaster message logged'
    : reply(451, TEMPORARY)
}

/** LMTP answers each recipient on its own, in RCPT order (RFC 2033 §4.2). */
function lmtpReply(delivery: Delivery, limit: number): SMTPServerDataResult {
  if (delivery.status === 'ok') return `OK: accepted as ${delivery.accepted.id}`
  if (delivery.status === 'logged') return 'OK: postmaster message logged'
  if (delivery.status === 'failed') return permanentReply(delivery.failure, limit)
  return reply(451, TEMPORARY)
}

async function deliver(deps: Deps, session: SMTPServerSession, raw: SpooledMessage, recipient: string) {
  let result: Result<Accepted>
  try {
    result = await deps.accept({ raw, recipient, source: 'smtp' })
  } catch (error) {
    deps.logger.error('smtp message not accepted, answered 451', {
      session: session.id,
      recipient,
      ...errorFields(error),
    })
    return { status: 'error' } as const
  }
  if (!result.ok) {
    deps.logger.warn('smtp message refused', { session: session.id, recipient, failure: result.failure })
    return { status: 'failed', failure: result.failure } as const
  }
  deps.logger.info('smtp message accepted', {
    session: session.id,
    recipient,
    id: result.value.id,
    account_id: result.value.accountId,
    bytes: raw.size,
    client: session.remoteAddress,
  })
  return { status: 'ok', accepted: result.value } as const
}

export async function startSmtpListener(deps: Deps, options: SmtpListenerOptions): Promise<SmtpListener> {
  const limit = options.maxMessageBytes
  const perAddress = connectionsPerClient(options.maxClientsPerAddress ?? 10)
  const isPostmaster = postmasterOf(options.domain)
  // The server's connections are looked up when a deadline falls, long after it was built.
  const deadlines = sessionDeadlines(
    () => server.connections,
    options.sessionTimeoutMs ?? 30 * 60_000,
    deps.logger,
  )
  const server = new SMTPServer({
    name: options.hostname,
    lmtp: options.lmtp,
    logger: false,
    // An MX for reports: no AUTH at all, and no AUTH-related command counting either.
    authOptional: true,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    size: limit,
    // smtp-server then answers 552 after DATA for an oversize message whatever onData says.
    rejectOversized: true,
    // Reverse DNS of every client costs a lookup per connection and decides nothing here.
    disableReverseLookup: true,
    socketTimeout: options.idleTimeoutMs ?? 120_000,
    closeTimeout: 10_000,
    maxClients: options.maxClients ?? 100,
    // RFC 5321 §4.5.3.1.8: at least 100 must be accepted; more would only multiply accept calls.
    maxRecipients: 100,
    onConnect(session, callback) {
      if (perAddress.open(session.id, session.remoteAddress)) {
        deadlines.start(session)
        return callback()
      }
      deps.logger.info('smtp connection refused: too many from one address', {
        client: session.remoteAddress,
      })
      // RFC 5321 §3.8: 421 closes the connection; the sender retries later.
      callback(reply(421, 'Too many connections from your address, try again later'))
    },
    onClose(session) {
      perAddress.close(session.id)
      deadlines.stop(session)
    },
    onRcptTo(address, session, callback) {
      if (isPostmaster(address.address)) return callback()
      deps.knowsRecipient(address.address).then(
        (known) => {
          if (known) return callback()
          deps.logger.info('smtp recipient refused', { session: session.id, recipient: address.address })
          callback(reply(550, `<${address.address}>: no such report address`))
        },
        (error: unknown) => {
          deps.logger.error('smtp recipient check failed, answered 451', {
            session: session.id,
            recipient: address.address,
            ...errorFields(error),
          })
          callback(reply(451, TEMPORARY))
        },
      )
    },
    onData(stream, session, callback) {
      const recipients = session.envelope.rcptTo.map((rcpt) => rcpt.address)
      const handle = async () => {
        let raw: Spool | null
        try {
          raw = await readCapped(stream, limit)
        } catch (error) {
          // The client went away mid-DATA: there is nobody to answer and nothing to accept.
          deps.logger.info('smtp message aborted by the client', {
            session: session.id,
            ...errorFields(error),
          })
          return callback(reply(451, 'Message incomplete'))
        }
        if (raw === null) {
          deps.logger.warn('smtp message over the size limit', { session: session.id, limit, recipients })
          const tooLarge = reply(552, `Message exceeds fixed maximum message size ${limit}`)
          return callback(tooLarge)
        }
        // One recipient after another: each is one durable write, and there are rarely more than one.
        const deliveries: Delivery[] = []
        try {
          for (const recipient of recipients) {
            if (!isPostmaster(recipient)) deliveries.push(await deliver(deps, session, raw, recipient))
            else {
              deps.logger.warn('smtp message for the postmaster logged, not kept', {
                session: session.id,
                recipient,
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
                bytes: raw.size,
                client: session.remoteAddress,
              })
              deliveries.push({ status: 'logged' })
            }
          }
        } finally {
          await raw.discard()
        }
        if (options.lmtp) {
          const perRecipient = deliveries.map((d) => lmtpReply(d, limit))
          return callback(null, perRecipient)
        }
        const answer = smtpReply(deliveries, limit)
        return typeof answer === 'string' ? callback(null, answer) : callback(answer)
      }
      handle().catch((error: unknown) => {
        deps.logger.error('smtp message handling failed, answered 451', {
          session: session.id,
          ...errorFields(error),
        })
        callback(reply(451, TEMPORARY))
      })
    },
  })
  // Socket errors of one client (resets, TLS garbage) arrive here; unhandled they would crash. An
  // error of the listen itself arrives here too, and is the caller's to report (the rejection below).
  let listening = false
  server.on('error', (error) => {
    if (listening) deps.logger.warn('smtp connection error', errorFields(error))
  })

  await new Promise<void>((resolve, reject) => {
    const onListenError = (error: Error) => reject(error)
    server.server.once('error', onListenError)
    server.listen(options.port, options.host, () => {
      server.server.off('error', onListenError)
      listening = true
      resolve()
    })
  })
  const address = server.server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  deps.logger.info('smtp listener started', { host: options.host, port, lmtp: options.lmtp })
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
