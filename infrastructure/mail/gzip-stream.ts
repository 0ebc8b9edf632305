import type { Writable } from 'node:stream'
import { createInflateRaw, type InflateRaw } from 'node:zlib'
import { ChunkReader } from './chunk-reader.ts'
import {
  asExtractionError,
  decompressionFailed,
  ExtractionError,
  type ExtractLimits,
  outputLimitBroken,
} from './extraction-failure.ts'

// Gzip (RFC 1952) decompressed as a stream, its limits checked on every chunk. The member framing
// is read here and only the deflate data goes to zlib, because a gzip stream with bytes after the
// last member is common (Mimecast appends CRLF) and createGunzip then fails with "incorrect header
// check" and drops the last output it had (seen with Bun 1.4). gzip(1) ignores such trailing
// garbage, and so does this; a following member (RFC 1952 §2.2: members may be concatenated) is read.

// Input is written in small slices so that one write can expand to at most ~1 MB (deflate tops
// out near 1,032:1) before the consumer has looked at the output.
const INPUT_SLICE = 1024

const FTEXT_FHCRC = 0x02
const FEXTRA = 0x04
const FNAME = 0x08
const FCOMMENT = 0x10

/** RFC 1952 §2.3.1: where the compressed blocks of the member at `offset` start. */
function memberBodyStart(data: Uint8Array, offset: number): number {
  if (data[offset] !== 0x1f || data[offset + 1] !== 0x8b)
    throw new ExtractionError(decompressionFailed('not gzip data'))
  if (data[offset + 2] !== 8) {
    throw new ExtractionError(
      decompressionFailed(`gzip compression method ${data[offset + 2]} is not deflate`),
    )
  }
  const flags = data[offset + 3] ?? 0
  let at = offset + 10
  if (flags & FEXTRA) at += 2 + ((data[at] ?? 0) | ((data[at + 1] ?? 0) << 8))
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue
    while (at < data.length && data[at] !== 0) at++
    at++
  }
  if (flags & FTEXT_FHCRC) at += 2
  if (at > data.length) throw new ExtractionError(decompressionFailed('the gzip header is truncated'))
  return at
}

function waitForDrain(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done)
      stream.off('close', done)
      stream.off('error', done)
      stream.off('end', done)
      resolve()
    }
    stream.on('drain', done)
    stream.on('close', done)
    stream.on('error', done)
    // Bun's inflater ends at the end of the deflate data, with input still unread (see feed).
    stream.on('end', done)
  })
}

/**
 * Feeds the deflate data to `inflater` until it reports the end of the compressed blocks. What was
 * written but not consumed (the trailer, the next member, garbage) is kept and put back into the
 * reader afterwards: at most the writable buffer plus a slice, never the whole input.
 */
async function feed(inflater: InflateRaw, reader: ChunkReader, state: FeedState): Promise<void> {
  const finished = () => inflater.destroyed || inflater.writableEnded || inflater.readableEnded
  for (;;) {
    if (finished()) return
    const piece = await reader.read(INPUT_SLICE)
    if (piece === null) break
    if (finished()) {
      reader.unshift(piece)
      return
    }
    state.written.push(piece)
    state.writtenBytes += piece.byteLength
    // Forget what zlib has consumed: only the tail past bytesWritten can be needed again.
    while (state.written.length > 0 && state.base + state.written[0]!.byteLength <= inflater.bytesWritten) {
      const first = state.written.shift()!
      state.writtenBytes -= first.byteLength
      state.base += first.byteLength
    }
    if (!inflater.write(piece)) await waitForDrain(inflater)
  }
  if (!finished()) inflater.end()
}

interface FeedState {
  /** Pieces written, from offset `base` of the member's deflate data on. */
  written: Uint8Array[]
  writtenBytes: number
  base: number
}

/** The bytes written to the inflater that it did not consume, in order. */
function unconsumed(state: FeedState, consumed: number): Uint8Array {
  const out = new Uint8Array(Math.max(0, state.base + state.writtenBytes - consumed))
  let at = 0
  let offset = state.base
  for (const piece of state.written) {
    const from = Math.max(0, consumed - offset)
    if (from < piece.byteLength) {
      out.set(piece.subarray(from), at)
      at += piece.byteLength - from
    }
    offset += piece.byteLength
  }
  return out
}

/**
 * Large output chunks: fewer, bigger pieces for the parser (for a large report the default 16 KB
 * cost ~2x in total). But zlib allocates a whole chunk per stream, and most reports are a few KB
 * compressed: 16 times the input (a typical XML ratio is 10-20) suffices for them.
 */
function outputChunkSize(compressed: number): number {
  return Math.min(256 * 1024, Math.max(16 * 1024, 2 ** Math.ceil(Math.log2(compressed * 16))))
}

// The gzip header is read from this many leading bytes (a file name or comment past it is refused).
const HEADER_WINDOW = 64 * 1024

/**
 * The decompressed bytes of a gzip payload, read from a byte array or a stream (an attachment as
 * it is decoded); throws ExtractionError when a limit breaks or the data is corrupt. The ratio
 * limit compares the output with the compressed bytes read so far.
 */
export async function* gunzipStream(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  limits: ExtractLimits,
): AsyncGenerator<Uint8Array> {
  const reader = new ChunkReader(source)
  const known = source instanceof Uint8Array ? source.byteLength : null
  let total = 0
  try {
    for (;;) {
      const head = await reader.peek(HEADER_WINDOW)
      const bodyStart = memberBodyStart(head, 0)
      reader.skip(bodyStart)
      const chunkSize = outputChunkSize(known === null ? HEADER_WINDOW : known - bodyStart)
      const inflater = createInflateRaw({ chunkSize })
      // The iteration below sees errors; this keeps a late one (after it stopped) from going unhandled.
      inflater.on('error', () => {})
      const state: FeedState = { written: [], writtenBytes: 0, base: 0 }
      const feeding = feed(inflater, reader, state).catch(() => {})
      let memberBytes = 0
      let consumed = 0
      try {
        for await (const chunk of inflater as AsyncIterable<Buffer>) {
          total += chunk.byteLength
          memberBytes += chunk.byteLength
          const broken = outputLimitBroken(total, known ?? reader.pulled, limits)
          if (broken) throw new ExtractionError(broken)
          yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        }
        consumed = inflater.bytesWritten
      } catch (error) {
        throw asExtractionError(error, 'gzip')
      } finally {
        inflater.destroy()
        await feeding
      }
      reader.unshift(unconsumed(state, consumed))
      // RFC 1952 §2.3.1: CRC32 and ISIZE (the size modulo 2^32) follow the compressed blocks.
      const trailer = await reader.peek(10)
      if (trailer.byteLength >= 8) {
        const view = new DataView(trailer.buffer, trailer.byteOffset, 8)
        if (view.getUint32(4, true) !== memberBytes % 2 ** 32) {
          throw new ExtractionError(
            decompressionFailed('the gzip trailer does not match the decompressed size'),
          )
        }
      }
      if (!(trailer.byteLength >= 10 && trailer[8] === 0x1f && trailer[9] === 0x8b)) return
      reader.skip(8)
    }
  } finally {
    await reader.close()
  }
}
