import type { Writable } from 'node:stream'
import { createInflateRaw } from 'node:zlib'
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
      resolve()
    }
    stream.on('drain', done)
    stream.on('close', done)
    stream.on('error', done)
  })
}

async function feed(stream: Writable, data: Uint8Array): Promise<void> {
  for (let at = 0; at < data.length; at += INPUT_SLICE) {
    if (stream.destroyed || stream.writableEnded) return
    if (!stream.write(data.subarray(at, at + INPUT_SLICE))) await waitForDrain(stream)
  }
  if (!stream.destroyed && !stream.writableEnded) stream.end()
}

/**
 * Large output chunks: fewer, bigger pieces for the parser (for a large report the default 16 KB
 * cost ~2x in total). But zlib allocates a whole chunk per stream, and most reports are a few KB
 * compressed: 16 times the input (a typical XML ratio is 10-20) suffices for them.
 */
function outputChunkSize(compressed: number): number {
  return Math.min(256 * 1024, Math.max(16 * 1024, 2 ** Math.ceil(Math.log2(compressed * 16))))
}

/** The decompressed bytes of a gzip payload; throws ExtractionError when a limit breaks or the data is corrupt. */
export async function* gunzipStream(data: Uint8Array, limits: ExtractLimits): AsyncGenerator<Uint8Array> {
  let total = 0
  let offset = 0
  for (;;) {
    const bodyStart = memberBodyStart(data, offset)
    const inflater = createInflateRaw({ chunkSize: outputChunkSize(data.byteLength - bodyStart) })
    // The iteration below sees errors; this keeps a late one (after it stopped) from going unhandled.
    inflater.on('error', () => {})
    const feeding = feed(inflater, data.subarray(bodyStart)).catch(() => {})
    let memberBytes = 0
    let consumed = 0
    try {
      for await (const chunk of inflater as AsyncIterable<Buffer>) {
        total += chunk.byteLength
        memberBytes += chunk.byteLength
        const broken = outputLimitBroken(total, data.byteLength, limits)
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
    // RFC 1952 §2.3.1: CRC32 and ISIZE (the size modulo 2^32) follow the compressed blocks.
    const trailer = bodyStart + consumed
    if (trailer + 8 <= data.length) {
      const view = new DataView(data.buffer, data.byteOffset + trailer, 8)
      if (view.getUint32(4, true) !== memberBytes % 2 ** 32) {
        throw new ExtractionError(
          decompressionFailed('the gzip trailer does not match the decompressed size'),
        )
      }
    }
    offset = trailer + 8
    if (!(data[offset] === 0x1f && data[offset + 1] === 0x8b)) return
  }
}
