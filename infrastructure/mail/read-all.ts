import { asExtractionError, type ExtractFailure, limitExceeded } from './extraction-failure.ts'

export type ReadAllResult = { ok: true; value: Uint8Array } | { ok: false; reason: ExtractFailure }

/** Reads a small payload (a TLS-RPT JSON report) into memory, refusing more than `limit` bytes. */
export async function readAll(source: AsyncIterable<Uint8Array>, limit: number): Promise<ReadAllResult> {
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for await (const chunk of source) {
      total += chunk.byteLength
      if (total > limit) {
        return {
          ok: false,
          reason: limitExceeded('decompressed_bytes', `the payload is larger than ${limit} bytes`),
        }
      }
      chunks.push(chunk)
    }
  } catch (error) {
    return { ok: false, reason: asExtractionError(error, 'reading').reason }
  }
  const value = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    value.set(chunk, at)
    at += chunk.byteLength
  }
  return { ok: true, value }
}
