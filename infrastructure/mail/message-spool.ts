import { randomBytes } from 'node:crypto'
import { type FileHandle, open, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SpooledMessage } from '../../domain/ingest/intake.ts'
import { processPacer } from '../runtime/gc-pacer.ts'

// A message arriving over HTTP or SMTP is read to its end before it is accepted (its size decides
// 413/552, its hash goes with it), but never held whole: the first MEMORY_BYTES stay in memory
// (nearly every report), the rest goes to a file in TMPDIR that is read back in pieces while it
// is copied into the database, and removed after (docs/ingestion.md, "Memory").

const MEMORY_BYTES = 1024 * 1024
const READ_BYTES = 1024 * 1024

export interface Spool extends SpooledMessage {
  /** Removes the spool file, if there is one. */
  discard(): Promise<void>
}

export type SpoolResult = { ok: true; spool: Spool } | { ok: false; size: number }

export interface SpoolOptions {
  /** Larger messages are refused (ok: false): not kept, and read no further unless `drain`. */
  maxBytes: number
  /** Read an oversize message to its end anyway (SMTP must reach the final dot to answer). */
  drain?: boolean
  /** Where the file goes (default: the OS temporary directory, TMPDIR). */
  dir?: string
}

/** A request's body spooled (spoolMessage); a request without one is an empty message. */
export function spoolBody(
  body: ReadableStream<Uint8Array> | null,
  options: SpoolOptions,
): Promise<SpoolResult> {
  return spoolMessage((body ?? noBytes()) as unknown as AsyncIterable<Uint8Array>, options)
}

async function* noBytes(): AsyncGenerator<Uint8Array> {}

export async function spoolMessage(
  source: AsyncIterable<Uint8Array>,
  options: SpoolOptions,
): Promise<SpoolResult> {
  const hash = new Bun.CryptoHasher('sha256')
  const memory: Uint8Array[] = []
  let inMemory = 0
  let size = 0
  let file: { path: string; handle: FileHandle } | null = null
  const remove = async () => {
    if (file === null) return
    const { path, handle } = file
    file = null
    await handle.close().catch(() => {})
    await unlink(path).catch(() => {})
  }
  try {
    for await (const chunk of source) {
      processPacer.count(chunk.byteLength)
      size += chunk.byteLength
      if (size > options.maxBytes) {
        memory.length = 0
        await remove()
        if (!options.drain) return { ok: false, size }
        continue
      }
      hash.update(chunk)
      if (file === null && inMemory + chunk.byteLength <= MEMORY_BYTES) {
        // Copied: a stream may hand out views of a buffer it reuses.
        memory.push(chunk.slice())
        inMemory += chunk.byteLength
        continue
      }
      if (file === null) {
        const path = join(options.dir ?? tmpdir(), `dmarcwatch-${randomBytes(12).toString('hex')}.eml`)
        file = { path, handle: await open(path, 'wx+', 0o600) }
      }
      await file.handle.write(chunk)
    }
  } catch (error) {
    await remove()
    throw error
  }
  if (size > options.maxBytes) return { ok: false, size }
  const sha256 = hash.digest('hex')
  const spooled = file as { path: string; handle: FileHandle } | null
  return {
    ok: true,
    spool: {
      size,
      sha256,
      async *pieces() {
        yield* memory
        if (spooled === null) return
        let position = 0
        for (;;) {
          const buffer = new Uint8Array(READ_BYTES)
          const { bytesRead } = await spooled.handle.read(buffer, 0, READ_BYTES, position)
          if (bytesRead === 0) return
          position += bytesRead
          yield buffer.subarray(0, bytesRead)
        }
      },
      discard: remove,
    },
  }
}

/** The first `count` bytes of a spooled message (fewer if it is shorter): its header, its kind. */
export async function firstBytes(message: SpooledMessage, count: number): Promise<Uint8Array> {
  const pieces: Uint8Array[] = []
  let size = 0
  for await (const piece of message.pieces()) {
    pieces.push(piece)
    size += piece.byteLength
    if (size >= count) break
  }
  return Buffer.concat(pieces).subarray(0, count)
}
