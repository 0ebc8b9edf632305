import type { PGlite } from '@electric-sql/pglite'

// pglite-socket runs each protocol message of a socket client on its own, under PGlite's lock. PGlite
// has one session, so the service's own queries (and other clients') could run between a client's
// Parse and Execute — replacing its unnamed statement or portal — or inside its open transaction.
// This queue makes a client's work atomic with respect to everyone else: the messages of one
// extended-query sequence run together (up to Sync), and a client that opens a transaction keeps
// the lock until ReadyForQuery says it is idle again. Others, the service included, wait.
//
// Whatever a client does, and whenever it disconnects or is killed, what it holds is given back
// (docs/architecture.md, "Storage"):
// - its messages not yet run are dropped when its socket closes; a Terminate never takes the lock;
// - a client waiting for the lock stops waiting when it closes;
// - the lock holder's close ends its unfinished extended-query sequence or COPY, rolls back its
//   open transaction and releases the lock, after the message it is running (if any) completes;
// - a holder that keeps the lock idle for `idleTimeoutMs` is disconnected (a watchdog, like
//   PostgreSQL's idle_in_transaction_session_timeout; the cleanup above does not depend on it).

// Extended-query messages that need no answer before the client's next Sync or Flush (PostgreSQL
// protocol, "Extended Query"): they are run together with it.
const DEFERRED = new Set([0x50, 0x42, 0x44, 0x45, 0x43]) // P B D E C
const TERMINATE = 0x58 // X
const IDLE = 0x49 // ReadyForQuery status I (E failed transaction, T in transaction)

function message(type: number, body: Uint8Array = new Uint8Array()): Uint8Array {
  const out = new Uint8Array(5 + body.length)
  out[0] = type
  new DataView(out.buffer).setInt32(1, 4 + body.length)
  out.set(body, 5)
  return out
}
const cString = (text: string) => new TextEncoder().encode(`${text}\0`)
// A client gone mid-sequence must not have its work committed (PostgreSQL aborts a backend's open
// transaction when its client goes away). CopyFail ends a COPY FROM STDIN it left open (ignored
// outside copy mode); an Execute of a portal that does not exist fails, which aborts the implicit
// transaction of the extended-query sequence (or puts an explicit one in the failed state); Sync
// then ends the sequence, and ROLLBACK an explicit transaction.
const COPY_FAIL = message(0x66, cString('client disconnected'))
const ABORT = message(0x45, new Uint8Array([...cString('dmarcwatch: client disconnected'), 0, 0, 0, 0]))
const SYNC = message(0x53)
const ROLLBACK = message(0x51, cString('ROLLBACK'))

// PGlite has no client to read COPY data from: a COPY FROM STDIN sent over the socket makes its
// backend hit end-of-file, end the session with FATAL "protocol synchronization was lost", and hang
// every later call (pglite 0.5). Such a statement is replaced by one that fails the same way a
// refused statement does (aborting a transaction it is in), before it reaches PGlite. COPY TO
// STDOUT works and is left alone; the match is deliberately broad (comments, literals).
const COPY_FROM_STDIN = /\bcopy\b[\s\S]*?\bfrom\s+stdin\b/i
const REFUSE_COPY = `DO $$ BEGIN RAISE EXCEPTION 'COPY FROM STDIN is not supported through the embedded database socket' USING ERRCODE = 'feature_not_supported'; END $$`

// Frontend messages of protocol 3.0 a trust-authenticated session may send (PostgreSQL protocol,
// "Message Formats"). PostgreSQL answers any other type with FATAL and ends the session; PGlite
// then hangs every later call, so such a client is cut off here before PGlite sees the message.
const FRONTEND = new Set([0x51, 0x50, 0x42, 0x44, 0x45, 0x43, 0x48, 0x53, 0x46, 0x64, 0x63, 0x66, 0x58])
const PROTOCOL_3 = 196608

function acceptable(data: Uint8Array): boolean {
  if (FRONTEND.has(data[0]!)) return true
  // A StartupMessage has no type byte: its length, then the protocol version.
  return data.length >= 8 && new DataView(data.buffer, data.byteOffset).getInt32(4) === PROTOCOL_3
}

function fatal(text: string): Uint8Array {
  const fields = [`SFATAL`, `VFATAL`, `C08P01`, `M${text}`].map((f) => cString(f))
  return message(0x45, new Uint8Array([...fields.flatMap((f) => [...f]), 0]))
}

/** A Query or Parse message whose statement is a COPY FROM STDIN, rewritten to fail; others as they are. */
export function refuseCopyFromStdin(data: Uint8Array): Uint8Array {
  const type = data[0]
  if (type !== 0x51 && type !== 0x50) return data
  const text = new TextDecoder().decode(data.subarray(5))
  if (!COPY_FROM_STDIN.test(text)) return data
  if (type === 0x51) return message(0x51, cString(REFUSE_COPY))
  // Parse: statement name, query, then parameter types (none are needed by the replacement).
  const name = text.slice(0, text.indexOf('\0'))
  return message(0x50, new Uint8Array([...cString(name), ...cString(REFUSE_COPY), 0, 0]))
}

/** The status byte of the last ReadyForQuery ('Z') in a response: I idle, T in transaction, E failed. */
export function lastReadyStatus(chunks: Uint8Array[]): number | null {
  // Messages can span chunks: walk the whole response as one byte sequence.
  const total = chunks.reduce((n, c) => n + c.length, 0)
  const all = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.length
  }
  let status: number | null = null
  let offset = 0
  while (offset + 5 <= all.length) {
    const type = all[offset]!
    const length =
      ((all[offset + 1]! << 24) | (all[offset + 2]! << 16) | (all[offset + 3]! << 8) | all[offset + 4]!) >>> 0
    if (length < 4) break
    if (type === 0x5a && offset + 5 < all.length) status = all[offset + 5]!
    offset += 1 + length
  }
  return status
}

interface Client {
  id: number
  /** Deferred extended-query messages, run with the client's next Sync or Flush. */
  pending: Uint8Array[]
  /** The client's work in arrival order: pglite-socket may hand us its next message before the last is done. */
  tail: Promise<unknown>
  closed: boolean
  /** Settles once a closed client holds nothing. */
  finished: Promise<void> | null
  /** The last ReadyForQuery status it received. */
  status: number
  /** Its last exchange ended without a ReadyForQuery (a Flush mid-sequence, a COPY in progress). */
  midSequence: boolean
  idleTimer: ReturnType<typeof setTimeout> | null
}

export interface QueueOptions {
  /** A lock holder idle this long is disconnected through `disconnect` (0: never). */
  idleTimeoutMs?: number
  /** Closes the client's socket; the queue's close (via pglite-socket's detach) then cleans up. */
  disconnect?: (handlerId: number) => void
}

export function exclusiveQueue(db: PGlite, options: QueueOptions = {}) {
  const clients = new Map<number, Client>()
  let holder: { client: Client; release: () => void } | null = null
  const waiting: { client: Client; grant: (granted: boolean) => void }[] = []
  let requested = false

  // PGlite's own queries take its transaction mutex, then its query mutex (a transaction keeps the
  // first for its whole length). A socket client takes both, in the same order, so it never runs
  // inside one of the service's transactions and the two never deadlock. At most one socket client
  // waits on PGlite at a time; the others wait here, where a closing client can leave the line.
  const pump = () => {
    if (holder !== null || requested || waiting.length === 0) return
    requested = true
    void db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(
        () =>
          new Promise<void>((release) => {
            requested = false
            const next = waiting.shift()
            if (next === undefined) {
              release()
              return
            }
            holder = { client: next.client, release }
            next.grant(true)
          }),
      ),
    )
  }

  const acquire = (client: Client): Promise<boolean> => {
    if (holder?.client === client) return Promise.resolve(true)
    if (client.closed) return Promise.resolve(false)
    return new Promise((grant) => {
      waiting.push({ client, grant })
      pump()
    })
  }

  const release = () => {
    const current = holder
    holder = null
    if (current !== null && current.client.idleTimer !== null) {
      clearTimeout(current.client.idleTimer)
      current.client.idleTimer = null
    }
    current?.release()
    pump()
  }

  const exec = async (part: Uint8Array, output: Uint8Array[], onData?: (data: Uint8Array) => void) => {
    await db.execProtocolRawStream(part, {
      onRawData: (data: Uint8Array) => {
        // The chunk may be a view of PGlite's memory that the next call overwrites: keep a copy.
        output.push(data.slice())
        onData?.(data)
      },
    })
  }

  /** Gives back what a closed lock holder left: its sequence, COPY and transaction, then the lock. */
  const cleanUp = async (client: Client) => {
    try {
      let status = client.status
      if (client.midSequence) {
        const output: Uint8Array[] = []
        await exec(COPY_FAIL, output)
        await exec(ABORT, output)
        await exec(SYNC, output)
        status = lastReadyStatus(output) ?? status
      }
      if (status !== IDLE || db.isInTransaction()) await exec(ROLLBACK, [])
    } catch {
      // PGlite closed under us (the service is stopping): nothing left to give back.
    } finally {
      release()
    }
  }

  const watchIdle = (client: Client) => {
    const limit = options.idleTimeoutMs ?? 0
    if (limit <= 0) return
    client.idleTimer = setTimeout(() => {
      client.idleTimer = null
      if (holder?.client !== client || client.closed) return
      if (options.disconnect) options.disconnect(client.id)
      else void close(client)
    }, limit)
    client.idleTimer.unref?.()
  }

  async function run(client: Client, parts: Uint8Array[], onData: (data: Uint8Array) => void) {
    if (!(await acquire(client))) return 0
    if (client.idleTimer !== null) {
      clearTimeout(client.idleTimer)
      client.idleTimer = null
    }
    const output: Uint8Array[] = []
    // PGlite takes one protocol message per call; all of them run while we hold the lock. A client
    // that closes meanwhile stops after the message running now; close() then cleans up.
    for (const part of parts) {
      if (client.closed) return 0
      try {
        await exec(part, output, onData)
      } catch (error) {
        // The session's state is unknown: the cleanup on close (pglite-socket closes the client on
        // this error) must end whatever sequence or transaction may be open.
        client.midSequence = true
        throw error
      }
    }
    const status = lastReadyStatus(output)
    client.midSequence = status === null
    if (status !== null) client.status = status
    if (client.closed) return 0
    // Give the lock back only when the client is idle: not inside a transaction (T, E), and not in
    // the middle of an extended-query sequence it flushed without a Sync (no ReadyForQuery yet).
    if (status === IDLE) release()
    else watchIdle(client)
    return output.reduce((n, chunk) => n + chunk.length, 0)
  }

  function close(client: Client): Promise<void> {
    if (client.finished === null) {
      client.closed = true
      client.pending = []
      const at = waiting.findIndex((w) => w.client === client)
      if (at >= 0) waiting.splice(at, 1)[0]!.grant(false)
      // After the message it may be running now; its later messages see `closed` and do nothing.
      client.finished = client.tail.then(async () => {
        if (holder?.client === client) await cleanUp(client)
      })
    }
    return client.finished
  }

  const clientOf = (handlerId: number) => {
    let client = clients.get(handlerId)
    if (client === undefined) {
      client = {
        id: handlerId,
        pending: [],
        tail: Promise.resolve(),
        closed: false,
        finished: null,
        status: IDLE,
        midSequence: false,
        idleTimer: null,
      }
      clients.set(handlerId, client)
    }
    return client
  }

  return {
    enqueue(handlerId: number, data: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
      const client = clientOf(handlerId)
      if (client.closed) return Promise.resolve(0)
      // Terminate: the client is done once its earlier messages are. It never takes the lock.
      const step =
        data[0] === TERMINATE
          ? async () => {
              void close(client)
              return 0
            }
          : async () => {
              if (client.closed) return 0
              if (!acceptable(data)) {
                onData(fatal(`invalid frontend message type ${data[0]}`))
                void close(client)
                options.disconnect?.(client.id)
                return 0
              }
              const safe = refuseCopyFromStdin(data)
              if (DEFERRED.has(safe[0]!)) {
                client.pending.push(safe)
                return 0
              }
              const parts = [...client.pending, safe]
              client.pending = []
              return run(client, parts, onData)
            }
      const result = client.tail.then(step)
      client.tail = result.catch(() => {})
      return result
    },
    getQueueLength: () =>
      waiting.length + [...clients.values()].reduce((n, client) => n + client.pending.length, 0),
    /** pglite-socket's detach, first step: the client's socket is gone. */
    clearQueueForHandler(handlerId: number) {
      const client = clients.get(handlerId)
      if (client !== undefined) void close(client)
    },
    /** pglite-socket's detach, second step: resolves once the client holds nothing. */
    async clearTransactionIfNeeded(handlerId: number) {
      const client = clients.get(handlerId)
      if (client === undefined) return
      await close(client)
      clients.delete(handlerId)
    },
    /** For tests and diagnostics: which client holds the lock, and how many wait. */
    state: () => ({ holder: holder?.client.id ?? null, waiting: waiting.length, clients: clients.size }),
  }
}
