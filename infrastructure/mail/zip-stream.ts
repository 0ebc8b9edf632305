import { Unzip, type UnzipFile, UnzipInflate } from 'fflate'
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

export interface ZipEntry {
  name: string
  compression: number
  /** The entry's decompressed bytes; read once, before the next entry is asked for. */
  chunks: AsyncIterable<Uint8Array>
}

// Bytes pushed into Unzip at a time: one push inflates at most ~1,032 times this much at once.
// Small slices also keep fflate's per-entry recursion inside push() shallow.
const INPUT_SLICE = 8 * 1024

function tooManyEntries(limits: ExtractLimits): ExtractionError {
  return new ExtractionError(
    limitExceeded('zip_entries', `the zip archive has more than ${limits.maxZipEntries} entries`),
  )
}

interface EntryState {
  name: string
  compression: number
  output: Uint8Array[]
  total: number
  failure: ExtractFailure | null
  finished: boolean
  /** Once skipped, its output is dropped as it comes. */
  skipped: boolean
}

/**
 * The entries of an archive, in order. Throws ExtractionError for a corrupt archive or past
 * maxZipEntries; an entry's own stream throws for its own trouble (method, limits, truncation).
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
  // An entry that broke an output limit ends the archive: inflating the rest of it only to find
  // the next entry would cost a bomb's whole size in CPU (its output dropped), so it is not read
  // further and its later entries are not offered.
  let abandoned = false
  const unzip = new Unzip((file: UnzipFile) => {
    if (++seen > limits.maxZipEntries) throw tooManyEntries(limits)
    const entry: EntryState = {
      name: file.name,
      compression: file.compression,
      output: [],
      total: 0,
      failure: null,
      finished: false,
      skipped: false,
    }
    arrived.push(entry)
    if (file.name.endsWith('/')) return
    if (file.compression !== 0 && file.compression !== 8) {
      entry.failure = decompressionFailed(
        `zip entry "${file.name}" uses compression method ${file.compression}, not stored or deflate`,
      )
      return
    }
    const compressed = file.size && file.size > 0 ? file.size : null
    // Written from fflate's callbacks; errors thrown there would be swallowed by its decoder.
    file.ondata = (error, chunk, final) => {
      if (entry.failure !== null) return
      if (error) {
        entry.failure = decompressionFailed(`zip entry "${file.name}": ${error.message}`)
        return
      }
      entry.total += chunk.byteLength
      entry.failure = outputLimitBroken(entry.total, compressed ?? known ?? reader.pulled, limits)
      if (entry.failure !== null) abandoned = true
      if (entry.failure === null && chunk.byteLength > 0 && !entry.skipped) entry.output.push(chunk)
      if (final) entry.finished = true
    }
    file.start()
  })
  unzip.register(UnzipInflate)

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

  async function* chunksOf(entry: EntryState): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (entry.failure !== null) throw new ExtractionError(entry.failure)
      while (entry.output.length > 0) yield entry.output.shift()!
      if (entry.finished) return
      if (!(await pushMore()) && !entry.finished && entry.output.length === 0) {
        if (entry.failure !== null) throw new ExtractionError(entry.failure)
        throw new ExtractionError(decompressionFailed('the zip entry is truncated'))
      }
    }
  }

  try {
    for (;;) {
      while (arrived.length === 0) if (!(await pushMore())) return
      const entry = arrived.shift()!
      const isDirectory = entry.name.endsWith('/')
      yield {
        name: entry.name,
        compression: entry.compression,
        chunks: isDirectory ? (async function* () {})() : chunksOf(entry),
      }
      // Whatever the consumer left of the entry is dropped as it is inflated (the inflater
      // finds the entry's end where a data descriptor leaves its size unknown).
      entry.skipped = true
      entry.output = []
    }
  } finally {
    await reader.close()
  }
}
