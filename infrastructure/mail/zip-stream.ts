import { Inflate, Unzip, type UnzipFile, UnzipPassThrough } from 'fflate'
import { cpuSlices } from '../runtime/cpu-slices.ts'
import { ChunkReader } from './chunk-reader.ts'
import {
  asExtractionError,
  decompressionFailed,
  type ExtractFailure,
  ExtractionError,
  type ExtractLimits,
  limitExceeded,
  outputLimitBroken,
} from './extraction-failure.ts'

// Zip archives (PKWARE APPNOTE) read with fflate's streaming Unzip, which walks the local file
// headers as bytes arrive, so an archive is read once, as it is decoded from the message, and
// never held whole. Only stored (0) and deflated (8) entries are supported, which is what every
// DMARC reporter sends. Entries come one after the other; each is read (or skipped) before the
// archive is read further.
//
// Unzip only frames the entries here: it hands over each entry's compressed bytes as they are,
// and an entry is inflated in this module, only as far as its reader asks for. An entry left
// unread (no report, as told from its first bytes) is passed over without inflating the rest of
// it: its compressed bytes are dropped as Unzip walks past them. Where the local header gives the
// compressed size (APPNOTE 4.3.7 local file header, 4.4.8 compressed size, 4.5.3 its Zip64
// form), that is exactly that many bytes; where general purpose bit 3 is set (4.4.4: the sizes
// are zero in the local header and follow the data in a data descriptor, 4.3.9; streaming writers
// such as Java's ZipOutputStream do this), Unzip finds the entry's end by the signature of the
// data descriptor or of the next header, not by inflating, so skipping costs a scan of the bytes.
// Inflating a skipped entry to its end cost a bomb's whole size in CPU: a 1 MB zip whose first
// entry was 1,000 MB of zeros took 15 s, and the report after it was never reached.

export interface ZipEntry {
  name: string
  compression: number
  /** The entry's decompressed bytes; read once, before the next entry is asked for. */
  chunks: AsyncIterable<Uint8Array>
}

// Bytes pushed into Unzip at a time, and inflated at a time once an entry is under way: one push
// inflates at most ~1,032 times this much at once. Small slices also keep fflate's per-entry
// recursion inside push() shallow.
const INPUT_SLICE = 8 * 1024
// The start of a deflated entry is inflated from much smaller slices, so that its first bytes (the reader
// looks at 4 KB to tell the format, sniff.ts) cost at most ~66 KB of output, not ~8 MB, when the
// entry is a bomb that is then skipped. Past HEAD_BYTES of output (~30 slices of XML), whole
// slices again: small slices throughout inflate XML a third slower.
const HEAD_SLICE = 64
const HEAD_BYTES = 64 * 1024
// Output of the entries left at their head (no report): past this much in one archive, it is
// refused as a bomb (limit_exceeded, decompressed_bytes). Each costs ~66 KB at most (~50 KB for
// zeros, whose first 64 bytes include a block header), so this ends an archive of bombs after 16
// to 21 of them, inside maxZipEntries (32); an entry that is no report and no bomb costs ~5 KB.
const SKIPPED_BYTES = 1024 * 1024

function tooManyEntries(limits: ExtractLimits): ExtractionError {
  return new ExtractionError(
    limitExceeded('zip_entries', `the zip archive has more than ${limits.maxZipEntries} entries`),
  )
}

/**
 * Hands a deflated entry's compressed bytes on undecoded, as fflate's UnzipPassThrough does for
 * stored ones: zipEntries inflates what is read, and drops what is skipped.
 */
class DeflatedBytes extends UnzipPassThrough {
  static override compression = 8
}

interface EntryState {
  name: string
  compression: number
  /** Compressed bytes arrived and not inflated yet (for the entry being read, one slice at most). */
  input: Uint8Array[]
  /** The last of its compressed bytes has arrived. */
  inputEnded: boolean
  /** The end was handed to the decoder. */
  closed: boolean
  /** Inflated past its head: its reader went on reading (a report). */
  pastHead: boolean
  /** Inflates (or, stored, passes on) a piece of compressed bytes into `output`. */
  decode: ((chunk: Uint8Array, final: boolean) => void) | null
  /** Deflated: its head is inflated in HEAD_SLICE pieces. */
  inflated: boolean
  output: Uint8Array[]
  /** Bytes decoded. */
  total: number
  failure: ExtractFailure | null
  finished: boolean
  /** Once skipped, its compressed bytes are dropped as they come. */
  skipped: boolean
}

/**
 * The entries of an archive, in order. Throws ExtractionError for a corrupt archive, past
 * maxZipEntries, or once the entries skipped had inflated past SKIPPED_BYTES; an entry's own
 * stream throws for its own trouble (method, limits, truncation).
 */
export async function* zipEntries(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  limits: ExtractLimits,
): AsyncGenerator<ZipEntry> {
  const reader = new ChunkReader(source)
  const known = source instanceof Uint8Array ? source.byteLength : null
  const arrived: EntryState[] = []
  let seen = 0
  let ended = false
  // An entry that broke an output limit ends the archive (it is hostile): its later entries are
  // not offered.
  let abandoned = false
  // Every entry's output together is held to the limit of one report, so an archive cannot cost
  // maxZipEntries times it; and that of the entries skipped at their head, to SKIPPED_BYTES.
  let archiveTotal = 0
  let skippedBytes = 0

  const unzip = new Unzip((file: UnzipFile) => {
    if (++seen > limits.maxZipEntries) throw tooManyEntries(limits)
    const entry: EntryState = {
      name: file.name,
      compression: file.compression,
      input: [],
      inputEnded: false,
      closed: false,
      pastHead: false,
      decode: null,
      inflated: false,
      output: [],
      total: 0,
      failure: null,
      finished: false,
      skipped: file.name.endsWith('/'),
    }
    arrived.push(entry)
    if (file.compression !== 0 && file.compression !== 8) {
      // Not started: Unzip has no decoder to hand its bytes to.
      entry.failure = decompressionFailed(
        `zip entry "${file.name}" uses compression method ${file.compression}, not stored or deflate`,
      )
      return
    }
    const compressed = file.size && file.size > 0 ? file.size : null
    const emit = (chunk: Uint8Array, final: boolean) => {
      if (entry.failure !== null) return
      entry.total += chunk.byteLength
      archiveTotal += chunk.byteLength
      entry.failure = outputLimitBroken(entry.total, compressed ?? known ?? reader.pulled, limits)
      if (entry.failure === null && archiveTotal > limits.maxDecompressedBytes) {
        entry.failure = limitExceeded(
          'decompressed_bytes',
          `the zip archive's entries decompress to more than the limit of ${limits.maxDecompressedBytes} bytes`,
        )
      }
      if (entry.failure !== null) abandoned = true
      else if (chunk.byteLength > 0) entry.output.push(chunk)
      if (final) entry.finished = true
    }
    if (file.compression === 0 || file.size === 0) {
      entry.decode = emit
    } else {
      const inflater = new Inflate(emit)
      entry.inflated = true
      entry.decode = (chunk, final) => {
        try {
          inflater.push(chunk, final)
        } catch (error) {
          entry.failure ??= decompressionFailed(`zip entry "${file.name}": ${(error as Error).message}`)
        }
      }
    }
    // Written from fflate's callbacks; errors thrown there would be swallowed by its decoder.
    file.ondata = (error, chunk, final) => {
      if (entry.skipped || entry.failure !== null) return
      if (error) {
        entry.failure = decompressionFailed(`zip entry "${file.name}": ${error.message}`)
        return
      }
      if (chunk.byteLength > 0) entry.input.push(chunk)
      if (final) entry.inputEnded = true
    }
    file.start()
  })
  unzip.register(DeflatedBytes)

  /** Pushes one more slice of the archive; false at its end. */
  const pushMore = async (): Promise<boolean> => {
    if (ended || abandoned) return false
    const piece = await reader.read(INPUT_SLICE)
    try {
      if (piece === null) {
        ended = true
        unzip.push(new Uint8Array(0), true)
        return false
      }
      unzip.push(piece, false)
    } catch (error) {
      throw asExtractionError(error, 'zip')
    }
    return true
  }

  /** Decodes the entry's next piece of input (its end, once all of it was decoded). */
  const decodeNext = (entry: EntryState): void => {
    let piece = entry.input.shift()
    if (piece === undefined) {
      if (entry.closed) {
        entry.failure ??= decompressionFailed('the zip entry is truncated')
        return
      }
      entry.closed = true
      entry.decode!(new Uint8Array(0), true)
      return
    }
    if (entry.total >= HEAD_BYTES) entry.pastHead = true
    else if (entry.inflated && piece.byteLength > HEAD_SLICE) {
      entry.input.unshift(piece.subarray(HEAD_SLICE))
      piece = piece.subarray(0, HEAD_SLICE)
    }
    const final = entry.inputEnded && entry.input.length === 0
    if (final) entry.closed = true
    entry.decode!(piece, final)
  }

  async function* chunksOf(entry: EntryState): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (entry.failure !== null) throw new ExtractionError(entry.failure)
      while (entry.output.length > 0) {
        yield entry.output.shift()!
      }
      if (entry.finished) return
      if (entry.input.length > 0 || entry.inputEnded) decodeNext(entry)
      else if (!(await pushMore()) && !entry.inputEnded) {
        if (entry.failure !== null) throw new ExtractionError(entry.failure)
        throw new ExtractionError(decompressionFailed('the zip entry is truncated'))
      }
    }
  }

  try {
    for (;;) {
      // Passing over what was skipped is a loop of its own: its CPU is given up to the event loop
      // in slices (infrastructure/runtime/cpu-slices.ts), as a report's parsing is.
      const slices = cpuSlices()
      while (arrived.length === 0) {
        if (!(await pushMore())) return
        if (slices.due()) await slices.pause()
      }
      const entry = arrived.shift()!
      const isDirectory = entry.name.endsWith('/')
      yield {
        name: entry.name,
        compression: entry.compression,
        chunks: isDirectory ? (async function* () {})() : chunksOf(entry),
      }
      // Whatever the consumer left of the entry is not inflated: its compressed bytes are dropped
      // as Unzip walks past them (by its size, or to its data descriptor).
      const readWhole = entry.finished && entry.output.length === 0
      entry.skipped = true
      entry.input = []
      entry.output = []
      if (entry.failure === null && !readWhole && !entry.pastHead) {
        skippedBytes += entry.total
        if (skippedBytes > SKIPPED_BYTES) {
          throw new ExtractionError(
            limitExceeded(
              'decompressed_bytes',
              `the zip entries skipped had decompressed past the limit of ${SKIPPED_BYTES} bytes`,
            ),
          )
        }
      }
    }
  } finally {
    await reader.close()
  }
}
