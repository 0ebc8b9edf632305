import type { PGlite } from '@electric-sql/pglite'
import {
  ABORT,
  acceptable,
  COPY_FAIL,
  DEFERRED,
  fatal,
  IDLE,
  lastReadyStatus,
  ROLLBACK,
  refuseCopyFromStdin,
  SYNC,
  TERMINATE,
} from './pg-protocol.ts'

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

const MAX_PENDING_BYTES = 1024 * 1024

interface Client {
  id: number
  /** Deferred extended-query messages, run with the client's next Sync or Flush. */
  pending: Uint8Array[]
  pendingBytes: number
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
    if (client.idleTimer !== null) clearTimeout(client.idleTimer)
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
      client.pendingBytes = 0
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
        pendingBytes: 0,
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
                client.pendingBytes += safe.length
                // A long sequence without Sync or Flush is run so far (the client then holds the lock
                // until its ReadyForQuery), so what waits here stays small.
                if (client.pendingBytes <= MAX_PENDING_BYTES) {
                  // A holder still sending its sequence is not idle.
                  if (holder?.client === client) watchIdle(client)
                  return 0
                }
              }
              const parts = DEFERRED.has(safe[0]!) ? client.pending : [...client.pending, safe]
              client.pending = []
              client.pendingBytes = 0
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
