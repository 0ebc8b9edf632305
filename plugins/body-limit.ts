import { Elysia, ParseError } from 'elysia'
import { FailureError } from './failures.ts'

export interface BodyLimits {
  /** Default for every route (contract §6: JSON bodies 1 MB). */
  defaultBytes: number
  /** Larger limits for path prefixes, e.g. raw report intake (64 MB). */
  byPrefix: { prefix: string; bytes: number }[]
}

export function limitFor(limits: BodyLimits, path: string): number {
  return limits.byPrefix.find((entry) => path.startsWith(entry.prefix))?.bytes ?? limits.defaultBytes
}

const MALFORMED_JSON = Object.freeze({ malformedJson: Symbol('malformed JSON') })

/** Throws the contract's 400 for a body that was not valid JSON (see bodyLimit's parser). */
export function assertWellFormed(body: unknown): void {
  if (body === MALFORMED_JSON) throw new ParseError()
}

const tooLarge = (limit: number) => new FailureError({ code: 'payload_too_large', limit })

/** Reads a body stream, refusing it as soon as it passes the limit (chunked bodies have no length). */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * Global: refuses an oversize body with 413 `payload_too_large` before it is read (by Content-Length)
 * or while it is read (JSON bodies of unknown length), and parses JSON itself so malformed JSON is a
 * contract-shaped 400.
 */
export function bodyLimit(limits: BodyLimits) {
  return new Elysia({ name: 'body-limit' })
    .onRequest(({ request }) => {
      const length = request.headers.get('content-length')
      if (length === null) return
      const limit = limitFor(limits, new URL(request.url).pathname)
      if (Number(length) > limit) throw tooLarge(limit)
    })
    .onParse({ as: 'global' }, async ({ request, contentType, path }) => {
      if (!contentType.toLowerCase().startsWith('application/json')) return
      const bytes = await readLimited(request, limitFor(limits, path))
      const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes)
      if (text.trim() === '') return null
      try {
        return JSON.parse(text)
      } catch {
        // Not thrown here: parsing runs before authentication, and a caller without a valid token
        // must get 401, not a parse error. The auth and public-limit macros call assertWellFormed.
        return MALFORMED_JSON
      }
    })
    .as('global')
}
