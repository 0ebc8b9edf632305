// Why a report could not be taken out of a message, as a value with a stable code (quarantine
// shows the message). Streaming decompression cannot return a value halfway through, so there the
// same reason travels inside an ExtractionError.

export interface ExtractLimits {
  /** Bytes one payload may decompress to (and the most an uncompressed payload may have). */
  maxDecompressedBytes: number
  /** Entries (files and folders) one zip archive may list. */
  maxZipEntries: number
  /** Decompressed bytes per compressed byte; checked once the output passes RATIO_CHECK_FLOOR_BYTES. */
  maxCompressionRatio: number
  /** MIME parts in one message, nested messages included. */
  maxParts: number
}

export type LimitName =
  | 'decompressed_bytes'
  | 'compression_ratio'
  | 'zip_entries'
  | 'mime_parts'
  | 'mime_header_bytes'

export type ExtractFailure =
  | { code: 'no_report_found'; message: string }
  | { code: 'malformed_mime'; message: string }
  | { code: 'decompression_failed'; message: string }
  | { code: 'limit_exceeded'; limit: LimitName; message: string }

export type ExtractFailureCode = ExtractFailure['code']

export class ExtractionError extends Error {
  constructor(readonly reason: ExtractFailure) {
    super(reason.message)
    this.name = 'ExtractionError'
  }
}

/**
 * An error of the storage around the extraction, carried through its guards untouched: the store a
 * payload is handed to (the database gone, a refused value), or the message's own source (its
 * bytes read back from the database). The guards turn a part that cannot be read into a skipped
 * part or a quarantine, but these say nothing about the message: taken for a bad part, a failed
 * store marked the message processed with the report never stored, and a failed read quarantined
 * it as malformed MIME. They reach the job instead, which fails and is retried (docs/ingestion.md,
 * "Processing").
 */
export class StoreFailure extends Error {
  constructor(readonly error: unknown) {
    super((error as Error)?.message ?? String(error))
    this.name = 'StoreFailure'
  }
}

/**
 * Rethrows a store's failure; anything else is the extraction's to judge. Called by the two maps
 * from an error to a reason (asExtractionError, mime-stream.ts mimeFailure), so no guard can turn
 * one into a skipped part or a quarantine.
 */
export function rethrowStoreFailure(error: unknown): void {
  if (error instanceof StoreFailure) throw error
}

// Deflate can shrink 1,032:1 at most, and a small report legitimately compresses well past any
// sensible ratio (a 2 KB gzip of 300 KB of repeated XML rows). Below this much output a payload
// is not a bomb, whatever its ratio, so the ratio is only judged past it.
export const RATIO_CHECK_FLOOR_BYTES = 1024 * 1024

export const decompressionFailed = (message: string): ExtractFailure => ({
  code: 'decompression_failed',
  message,
})

export const limitExceeded = (limit: LimitName, message: string): ExtractFailure => ({
  code: 'limit_exceeded',
  limit,
  message,
})

/** The limit `produced` decompressed bytes from `compressed` input bytes break, if any. */
export function outputLimitBroken(
  produced: number,
  compressed: number,
  limits: ExtractLimits,
): ExtractFailure | null {
  if (produced > limits.maxDecompressedBytes) {
    return limitExceeded(
      'decompressed_bytes',
      `decompressed size exceeds the limit of ${limits.maxDecompressedBytes} bytes`,
    )
  }
  if (produced > RATIO_CHECK_FLOOR_BYTES && produced > Math.max(compressed, 1) * limits.maxCompressionRatio) {
    return limitExceeded(
      'compression_ratio',
      `compression ratio exceeds ${limits.maxCompressionRatio}:1 (${compressed} compressed bytes expanded past ${produced})`,
    )
  }
  return null
}

/** Any error raised while decompressing, as an ExtractionError (typed ones pass through). */
export function asExtractionError(error: unknown, what: string): ExtractionError {
  if (error instanceof ExtractionError) return error
  // Never a reason of the message's own: thrown on to the job (StoreFailure above).
  rethrowStoreFailure(error)
  return new ExtractionError(decompressionFailed(`${what}: ${(error as Error)?.message ?? String(error)}`))
}
