import type { PGlite } from '@electric-sql/pglite'

// pglite-socket runs each protocol message of a socket client on its own, under PGlite's lock. PGlite
// has one session, so the service's own queries (and other clients') can run between a client's
// Parse and Execute — replacing its unnamed statement or portal — or inside its open transaction.
// This queue makes a client's work atomic with respect to everyone else: the messages of one
// extended-query sequence run together (up to Sync), and a client that opens a transaction keeps
// the lock until ReadyForQuery says it is idle again. Others, the service included, wait.

// Extended-query messages that need no answer before the client's next Sync or Flush (PostgreSQL
// protocol, "Extended Query"): they are run together with it.
const DEFERRED = new Set([0x50, 0x42, 0x44, 0x45, 0x43]) // P B D E C

interface Holder {
  handlerId: number
  release: () => void
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

export function exclusiveQueue(db: PGlite) {
  const pending = new Map<number, Uint8Array[]>()
  let holder: Holder | null = null

  const acquire = (handlerId: number) =>
    new Promise<void>((acquired) => {
      void db.runExclusive(
        () =>
          new Promise<void>((release) => {
            holder = { handlerId, release }
            acquired()
          }),
      )
    })

  const release = () => {
    const current = holder
    holder = null
    current?.release()
  }

  async function run(
    handlerId: number,
    parts: Uint8Array[],
    onData: (data: Uint8Array) => void,
  ): Promise<number> {
    if (holder?.handlerId !== handlerId) await acquire(handlerId)
    const output: Uint8Array[] = []
    let bytes = 0
    try {
      // PGlite takes one protocol message per call; all of them run while we hold the lock.
      for (const part of parts) {
        await db.execProtocolRawStream(part, {
          onRawData: (data: Uint8Array) => {
            bytes += data.length
            // The chunk may be a view of PGlite's memory that the next call overwrites: keep a copy.
            output.push(data.slice())
            onData(data)
          },
        })
      }
    } catch (error) {
      release()
      throw error
    }
    // Give the lock back only when the client is idle: not inside a transaction (T, E), and not in
    // the middle of an extended-query sequence it flushed without a Sync (no ReadyForQuery yet).
    if (lastReadyStatus(output) === 0x49) release()
    return bytes
  }

  return {
    enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
      if (DEFERRED.has(message[0]!)) {
        const list = pending.get(handlerId) ?? []
        list.push(message)
        pending.set(handlerId, list)
        return Promise.resolve(0)
      }
      const parts = [...(pending.get(handlerId) ?? []), message]
      pending.delete(handlerId)
      // A client's messages arrive one after another (its handler awaits each); different clients
      // and the service itself are serialised by PGlite's lock, which a transaction keeps held.
      return run(handlerId, parts, onData)
    },
    getQueueLength: () => [...pending.values()].reduce((n, list) => n + list.length, 0),
    clearQueueForHandler(handlerId: number) {
      pending.delete(handlerId)
    },
    /** A client that disconnects inside its transaction: roll it back and let others run. */
    async clearTransactionIfNeeded(handlerId: number) {
      if (holder?.handlerId !== handlerId) return
      try {
        await db.execProtocolRawStream(
          new Uint8Array([0x51, 0, 0, 0, 13, ...new TextEncoder().encode('ROLLBACK'), 0]),
          {
            onRawData: () => {},
          },
        )
      } finally {
        release()
      }
    },
  }
}
