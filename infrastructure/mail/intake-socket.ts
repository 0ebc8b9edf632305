import { chmodSync, existsSync, rmSync } from 'node:fs'
import type { Accepted, AcceptMessage, SpooledMessage } from '../../domain/ingest/intake.ts'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import type { Failure } from '../../domain/shared/result.ts'
import { spoolBody } from './message-spool.ts'

// The local hand-off of `bun run cli ingest` (the mail server's pipe transport) to the service that
// holds the embedded database (docs/ingestion.md, "The CLI pipe"): HTTP over a Unix socket in
// DATA_DIR. Whoever can reach DATA_DIR (mode 0700) may use it, the same boundary as the database
// socket beside it, so there is no secret and no rate limit. The service stores the message with its
// own connection, so a burst of pipe processes costs no database sessions.
//
//   POST /messages[?recipient=ADDRESS]   body: the raw message
//   202 {"id"}                           stored (the message row and its job committed)
//   422 {"failure"}                      refused: not_found (no such report address), payload_too_large
//   503 {"error"}                        not stored now: the caller should try again later

export const INTAKE_SOCKET_FILE = 'intake.sock'
// Messages read and stored at once; others wait unread (bounds the spool files and connections of a burst).
const CONCURRENT = 8

export interface IntakeSocket {
  close(): Promise<void>
}

export async function serveIntakeSocket(
  deps: { accept: AcceptMessage; logger: Logger },
  options: { path: string; maxMessageBytes: number },
): Promise<IntakeSocket> {
  // Left by a killed service: nothing listens on it (the caller holds DATA_DIR's lock).
  rmSync(options.path, { force: true })
  let active = 0
  const queued: (() => void)[] = []
  const slot = async () => {
    if (active < CONCURRENT) active++
    else await new Promise<void>((resolve) => queued.push(resolve))
  }
  const free = () => {
    const next = queued.shift()
    if (next) next()
    else active--
  }
  const server = Bun.serve({
    unix: options.path,
    // Above our own limit, so an oversize message gets the 422 below rather than Bun's bare 413.
    maxRequestBodySize: options.maxMessageBytes + 1024 * 1024,
    // Never Bun's development error page (its stack, source lines and paths).
    development: false,
    error(error) {
      deps.logger.error('intake socket: request failed', errorFields(error))
      return Response.json({ error: 'internal_error' }, { status: 500 })
    },
    async fetch(request) {
      // A request with no Host header (HTTP/1.0) or a malformed one has no URL.
      if (!URL.canParse(request.url)) return Response.json({ error: 'bad_request' }, { status: 400 })
      const url = new URL(request.url)
      if (request.method !== 'POST' || url.pathname !== '/messages')
        return Response.json({ error: 'not_found' }, { status: 404 })
      await slot()
      try {
        // Spooled as it arrives, as every intake path is (docs/ingestion.md, "Memory"): a burst of
        // 64 MB messages costs a megabyte each here, not the message.
        const spooled = await spoolBody(request.body, { maxBytes: options.maxMessageBytes })
        if (!spooled.ok) {
          const failure: Failure = { code: 'payload_too_large', limit: options.maxMessageBytes }
          return Response.json({ failure }, { status: 422 })
        }
        try {
          const recipient = url.searchParams.get('recipient')
          const result = await deps.accept({ raw: spooled.spool, recipient, source: 'cli' })
          return result.ok
            ? Response.json({ id: result.value.id }, { status: 202 })
            : Response.json({ failure: result.failure }, { status: 422 })
        } finally {
          await spooled.spool.discard()
        }
      } catch (error) {
        deps.logger.error('intake socket: message not stored', errorFields(error))
        return Response.json({ error: 'unavailable' }, { status: 503 })
      } finally {
        free()
      }
    },
  })
  chmodSync(options.path, 0o600)
  return {
    close: async () => {
      await server.stop()
      rmSync(options.path, { force: true })
    },
  }
}

export type HandOff =
  | { outcome: 'accepted'; id: Accepted['id'] }
  | { outcome: 'refused'; failure: Failure }
  /** No service listens: the caller stores the message itself. */
  | { outcome: 'no_service' }
  /** The service did not confirm storing it (it may have): the mail server should retry later. */
  | { outcome: 'not_stored'; reason: string }

/** A stream of pieces, each read when the stream is pulled (fetch sends it chunked). */
function streamOf(pieces: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = pieces[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}

/** Hands a raw message to the service listening on `path`, if one does. */
export async function handOff(
  path: string,
  message: { raw: Uint8Array | SpooledMessage; recipient: string | null },
  options: { maxMessageBytes: number; timeoutMs?: number },
): Promise<HandOff> {
  if (!existsSync(path)) return { outcome: 'no_service' }
  const query = message.recipient === null ? '' : `?recipient=${encodeURIComponent(message.recipient)}`
  let response: Response
  try {
    response = await fetch(`http://localhost/messages${query}`, {
      method: 'POST',
      // A spooled message (the CLI's stdin) is sent as it is read back, never held whole.
      body:
        message.raw instanceof Uint8Array
          ? (message.raw as Uint8Array<ArrayBuffer>)
          : streamOf(message.raw.pieces()),
      unix: path,
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    // Nothing listens (a service killed without removing its socket): nothing was sent.
    if (code === 'ECONNREFUSED' || code === 'ENOENT') return { outcome: 'no_service' }
    return { outcome: 'not_stored', reason: error instanceof Error ? error.message : String(error) }
  }
  const body = (await response.json().catch(() => ({}))) as { id?: string; failure?: Failure }
  if (response.status === 202 && typeof body.id === 'string') return { outcome: 'accepted', id: body.id }
  if (response.status === 422 && body.failure) return { outcome: 'refused', failure: body.failure }
  // Far over the limit: refused before our handler read it.
  if (response.status === 413)
    return { outcome: 'refused', failure: { code: 'payload_too_large', limit: options.maxMessageBytes } }
  return { outcome: 'not_stored', reason: `the service answered ${response.status}` }
}
