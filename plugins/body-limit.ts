import { Elysia, ParseError } from 'elysia'
import { FailureError } from './failures.ts'
import { findUnsafeJson, type InputProblem, unsafeInputFailure } from './input-rules.ts'
import { readFormHead, utf8Text } from './multipart.ts'

export interface BodyLimits {
  /** Default for every route (docs/api.md "Authentication and limits": JSON bodies 1 MB). */
  defaultBytes: number
  /**
   * Larger limits for path prefixes, for bodies that stream: raw report intake, a multipart upload
   * (64 MB). A body this parser holds whole (JSON, a form's text) stays under `defaultBytes`.
   */
  byPrefix: { prefix: string; bytes: number }[]
  /** Paths whose handlers read the raw body stream themselves (under their limit); not parsed here. */
  rawPrefixes?: string[]
}

export function limitFor(limits: BodyLimits, path: string): number {
  return limits.byPrefix.find((entry) => path.startsWith(entry.prefix))?.bytes ?? limits.defaultBytes
}

const MALFORMED_JSON = Object.freeze({ malformedJson: Symbol('malformed JSON') })
const TOO_LARGE = Symbol('body over the limit')
/** The parsed "body" of a raw route: its handler reads `request.body` itself. */
export const RAW_BODY = Object.freeze({ rawBody: true })
const tooLargeMarker = (limit: number) => Object.freeze({ [TOO_LARGE]: limit })
const NOT_JSON = Object.freeze({ notJson: Symbol('not JSON') })
const NOT_OBJECT = Object.freeze({ notObject: Symbol('not a JSON object') })
const NOT_UTF8 = Object.freeze({ notUtf8: Symbol('not UTF-8') })
const UNSAFE = Symbol('body breaking an input rule')
const unsafeMarker = (problem: InputProblem) => Object.freeze({ [UNSAFE]: problem })

/** Throws the API's 400 or 413 (docs/api.md) for a body the parser could not take (see bodyLimit's parser). */
export function assertWellFormed(body: unknown): void {
  if (body === MALFORMED_JSON) throw new ParseError()
  if (body !== null && typeof body === 'object' && TOO_LARGE in body) {
    throw tooLarge((body as Record<symbol, number>)[TOO_LARGE]!)
  }
  if (body === NOT_JSON) {
    const message = 'The request body must be JSON, sent with Content-Type: application/json.'
    throw new FailureError({ code: 'validation_failed', message, errors: { body: [message] } })
  }
  if (body === NOT_OBJECT) {
    const message = 'The request body must be a JSON object.'
    throw new FailureError({ code: 'validation_failed', message, errors: { body: [message] } })
  }
  if (body === NOT_UTF8) {
    const message = 'The request body must be well-formed UTF-8 text.'
    throw new FailureError({ code: 'validation_failed', message, errors: { body: [message] } })
  }
  if (body !== null && typeof body === 'object' && UNSAFE in body) {
    throw unsafeInputFailure((body as Record<symbol, InputProblem>)[UNSAFE]!)
  }
}

const tooLarge = (limit: number) => new FailureError({ code: 'payload_too_large', limit })

/**
 * API requests whose Content-Length is over their route's limit, with that limit: refused once the
 * caller is authenticated and counted (assertWithinLimit, called by every API macro in
 * plugins/auth.ts), so the 413 comes after a 401 or 429 and carries the limit headers like every API
 * answer (docs/api.md, "Input rules"). The body is never read: the parser stands in a marker.
 */
const oversize = new WeakMap<Request, number>()

/** Throws the API's 413 for a request whose Content-Length is over its limit (see `oversize`). */
export function assertWithinLimit(request: Request): void {
  const limit = oversize.get(request)
  if (limit !== undefined) throw tooLarge(limit)
}

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

const isJson = (contentType: string) => /^application\/([\w.+-]+\+)?json\b/i.test(contentType)

/** The parse result of a multipart body: its fields before the first file (readFormHead). */
async function formHead(request: Request, limits: BodyLimits) {
  // The header itself: Elysia's `contentType` has lost the boundary parameter.
  const type = request.headers.get('content-type') ?? ''
  // The fields are a form's text, held like any other: at most the default limit of them.
  const head = await readFormHead(request.body, type, limits.defaultBytes)
  if (head.ok) return head.form
  if (head.problem === 'too_large') return tooLargeMarker(limits.defaultBytes)
  if (head.problem === 'not_utf8') return NOT_UTF8
  return new FormData()
}

/**
 * Global: refuses an oversize body with 413 `payload_too_large` before it is read (by Content-Length)
 * or while it is read (JSON bodies of unknown length), and parses JSON itself so malformed JSON is a
 * 400 in the API's format.
 */
export function bodyLimit(limits: BodyLimits) {
  return new Elysia({ name: 'body-limit' })
    .onRequest(({ request }) => {
      const length = request.headers.get('content-length')
      if (length === null) return
      const path = new URL(request.url).pathname
      const limit = limitFor(limits, path)
      if (!(Number(length) > limit)) return
      // The dashboard's pages refuse at once; the API after authentication (see `oversize`).
      if (!path.startsWith('/api/')) throw tooLarge(limit)
      oversize.set(request, limit)
    })
    .onParse({ as: 'global' }, async ({ request, contentType, path }) => {
      const over = oversize.get(request)
      if (over !== undefined) return tooLargeMarker(over)
      // Every body is read here, under its limit. Routes declare `parse: 'json'` for their OpenAPI
      // content type; this parser runs before theirs and answers for them.
      // A value (not undefined) stops Elysia's own parsers too, so the stream stays unread.
      if (limits.rawPrefixes?.some((prefix) => path.startsWith(prefix))) return RAW_BODY
      // A file upload (the dashboard's report upload; not under /api/, where every body is JSON):
      // only its fields before the first file are read here, the files stay in the stream for the
      // route (plugins/multipart.ts). A body that is no valid multipart is an empty form (the CSRF
      // check then refuses it).
      if (/^multipart\/form-data\b/i.test(contentType) && !path.startsWith('/api/'))
        return formHead(request, limits)
      // A body held whole (JSON, a form's text) is never larger than the default: the larger limits
      // are for what streams (raw routes, uploads), so concurrent requests cannot hold them.
      const limit = Math.min(limitFor(limits, path), limits.defaultBytes)
      let bytes: Uint8Array
      try {
        bytes = await readLimited(request, limit)
      } catch (error) {
        // Elysia turns anything thrown by a parser into a parse error; the 413 is raised after
        // authentication instead, like a malformed body (see assertWellFormed).
        if (error instanceof FailureError) return tooLargeMarker(limit)
        throw error
      }
      // Bytes that are not UTF-8 are refused, never read as U+FFFD (docs/api.md, "Input rules").
      const text = utf8Text(bytes)
      if (text === null) return path.startsWith('/api/') && !isJson(contentType) ? NOT_JSON : NOT_UTF8
      if (!isJson(contentType)) {
        // Every API body is JSON (routes that take anything else are raw, above). Elysia would
        // otherwise read a text body as JSON anyway, or a form as an empty object.
        if (path.startsWith('/api/') && text.trim() !== '') return NOT_JSON
        // The dashboard's forms: its handlers read the text (plugins/session.ts, formOf).
        return text
      }
      if (text.trim() === '') return null
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        // Not thrown here: parsing runs before authentication, and a caller without a valid token
        // must get 401, not a parse error. The auth and public-limit macros call assertWellFormed.
        return MALFORMED_JSON
      }
      // Every API body is an object; Elysia would let a list, a string or null through an
      // all-optional model (a route whose body may be left out takes no body, not `null`).
      if (
        path.startsWith('/api/') &&
        (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      )
        return NOT_OBJECT
      // The input rules, on the parsed value before validation can drop or coerce anything (a
      // `__proto__` key, a control character in an ignored field); reported after authentication.
      const problem = findUnsafeJson(parsed)
      return problem === null ? parsed : unsafeMarker(problem)
    })
    .as('global')
}
