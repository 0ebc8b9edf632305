// PostgreSQL wire-protocol pieces (protocol 3.0, "Message Formats") the PGlite socket queue
// (socket-queue.ts) reads and writes.

// Extended-query messages that need no answer before the client's next Sync or Flush (PostgreSQL
// protocol, "Extended Query"): they are run together with it.
export const DEFERRED = new Set([0x50, 0x42, 0x44, 0x45, 0x43]) // P B D E C
export const TERMINATE = 0x58 // X
export const IDLE = 0x49 // ReadyForQuery status I (E failed transaction, T in transaction)

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
export const COPY_FAIL = message(0x66, cString('client disconnected'))
export const ABORT = message(
  0x45,
  new Uint8Array([...cString('dmarcwatch: client disconnected'), 0, 0, 0, 0]),
)
export const SYNC = message(0x53)
export const ROLLBACK = message(0x51, cString('ROLLBACK'))

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

export function acceptable(data: Uint8Array): boolean {
  if (FRONTEND.has(data[0]!)) return true
  // A StartupMessage has no type byte: its length, then the protocol version.
  return data.length >= 8 && new DataView(data.buffer, data.byteOffset).getInt32(4) === PROTOCOL_3
}

export function fatal(text: string): Uint8Array {
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
