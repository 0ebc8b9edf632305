import { Unzip, type UnzipFile, UnzipInflate } from 'fflate'
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
// headers as bytes arrive. Only stored (0) and deflated (8) entries are supported, which is what
// every DMARC reporter sends. Each payload re-reads the archive and inflates just its own entry.

export interface ZipEntry {
  index: number
  name: string
  compression: number
  /** Compressed size from the local header; absent when the archive was written as a stream. */
  size: number | null
}

// Bytes pushed into Unzip at a time: one push inflates at most ~1,032 times this much at once.
// Small slices also keep fflate's per-entry recursion inside push() shallow.
const INPUT_SLICE = 8 * 1024

function tooManyEntries(limits: ExtractLimits): ExtractionError {
  return new ExtractionError(
    limitExceeded('zip_entries', `the zip archive has more than ${limits.maxZipEntries} entries`),
  )
}

/** Pushes the archive through `unzip` until `stop()` says so; fflate errors become ExtractionErrors. */
function* pushSlices(unzip: Unzip, data: Uint8Array, stop: () => boolean): Generator<void> {
  for (let at = 0; at < data.length && !stop(); at += INPUT_SLICE) {
    try {
      unzip.push(data.subarray(at, at + INPUT_SLICE), at + INPUT_SLICE >= data.length)
    } catch (error) {
      throw asExtractionError(error, 'zip')
    }
    yield
  }
}

/** The entries of an archive, without inflating anything; fails past maxZipEntries. */
export function listZipEntries(data: Uint8Array, limits: ExtractLimits): ZipEntry[] {
  const entries: ZipEntry[] = []
  const unzip = new Unzip((file: UnzipFile) => {
    if (entries.length >= limits.maxZipEntries) throw tooManyEntries(limits)
    entries.push({
      index: entries.length,
      name: file.name,
      compression: file.compression,
      size: file.size ?? null,
    })
  })
  unzip.register(UnzipInflate)
  for (const _ of pushSlices(unzip, data, () => false)) {
    // every slice is pushed; the callback above collects the entries
  }
  return entries
}

/** The decompressed bytes of entry `index`; throws ExtractionError when a limit breaks or the data is corrupt. */
export async function* unzipEntryStream(
  data: Uint8Array,
  index: number,
  limits: ExtractLimits,
): AsyncGenerator<Uint8Array> {
  const output: Uint8Array[] = []
  // Written from fflate's callbacks; errors thrown there would be swallowed by its decoder.
  const state: { failure: ExtractFailure | null; finished: boolean } = { failure: null, finished: false }
  let seen = 0
  let total = 0
  const unzip = new Unzip((file: UnzipFile) => {
    const current = seen++
    if (seen > limits.maxZipEntries) throw tooManyEntries(limits)
    if (current !== index) return
    if (file.compression !== 0 && file.compression !== 8) {
      state.failure = decompressionFailed(
        `zip entry "${file.name}" uses compression method ${file.compression}, not stored or deflate`,
      )
      return
    }
    const compressed = file.size && file.size > 0 ? file.size : data.byteLength
    file.ondata = (error, chunk, final) => {
      if (state.failure !== null) return
      if (error) {
        state.failure = decompressionFailed(`zip entry "${file.name}": ${error.message}`)
        return
      }
      total += chunk.byteLength
      state.failure = outputLimitBroken(total, compressed, limits)
      if (state.failure === null && chunk.byteLength > 0) output.push(chunk)
      if (final) state.finished = true
    }
    file.start()
  })
  unzip.register(UnzipInflate)
  for (const _ of pushSlices(unzip, data, () => state.finished || state.failure !== null)) {
    if (state.failure !== null) break
    while (output.length > 0) yield output.shift()!
  }
  if (state.failure !== null) throw new ExtractionError(state.failure)
  while (output.length > 0) yield output.shift()!
  if (!state.finished) {
    throw new ExtractionError(
      decompressionFailed(
        seen <= index ? `the zip archive has no entry ${index}` : 'the zip entry is truncated',
      ),
    )
  }
}
