import { isIP } from 'node:net'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { isPublicAddress } from './address-guard.ts'
import { pinnedFetch } from './pinned-fetch.ts'

// The one way out to HTTP (docs/outbound-http.md): webhooks, MTA-STS policies, DNS provider APIs
// and OAuth all send through a client made here, with the limits of their use. Every request, and
// every redirect hop, is vetted the same way: https (http only where private targets are allowed),
// the host resolved and every address checked against the SSRF rules (address-guard.ts), the
// connection pinned to the checked address (pinned-fetch.ts, against DNS rebinding). The answer is
// read under a byte cap, and connect and total deadlines bound the time. Credentials never follow a
// redirect to another origin.

export type OutboundFailureKind =
  /** The URL or its addresses are not allowed (scheme, SSRF rules), or the URL is malformed. */
  | 'refused'
  /** The host has no address (or resolving it failed): DNS may recover, so it is retryable. */
  | 'unresolved'
  /** The connection failed (refused, reset, TLS). */
  | 'connect'
  /** No status and headers within the connect deadline, or the exchange passed the total one. */
  | 'timeout'
  /** The body is larger than the use's cap. */
  | 'too_large'
  /** The server redirected and this use does not follow (or the hop limit was reached). */
  | 'redirect'

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailureKind,
    message: string,
  ) {
    super(message)
    this.name = 'OutboundError'
  }
}

/** What one use (webhooks, MTA-STS, a DNS provider, OAuth) allows; see docs/outbound-http.md. */
export interface OutboundPolicy {
  dns: DnsResolver
  /** Loopback, private, link-local... addresses (and plain http) allowed: the operator's choice. */
  allowPrivate: boolean
  /** Bytes of response body read at most (decoded); past it the stream is cancelled. */
  maxResponseBytes: number
  /** Until the status and headers arrive (resolving, connecting, TLS, the server's first answer). */
  connectTimeoutMs: number
  /** The whole exchange, redirects and body included. */
  totalTimeoutMs: number
  /** Test seam for a local HTTPS server with its own CA; production uses the system trust store. */
  tls?: { ca?: string }
}

export interface OutboundRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
  /** `error` (default): a redirect fails; `manual`: the 3xx is the answer; `follow`: vetted hops. */
  redirect?: 'error' | 'manual' | 'follow'
  /** Hops followed at most with `follow` (default 3). */
  maxRedirects?: number
  /** Past the cap: `fail` (default) throws too_large; `truncate` keeps the first bytes, flagged. */
  overflow?: 'fail' | 'truncate'
}

export interface OutboundResponse {
  status: number
  headers: Headers
  /** Where the answer came from (after redirects). */
  url: URL
  /** The body, at most the cap. */
  body: Uint8Array
  /** Only with `overflow: 'truncate'`: the body went past the cap, or was cut by the deadline. */
  truncated: boolean
  /** performance.now() when the status and headers arrived. */
  headersAt: number
  text(): string
  /** The body as JSON; throws a SyntaxError for anything else. */
  json(): unknown
}

export interface HttpClient {
  request(url: string | URL, init?: OutboundRequest): Promise<OutboundResponse>
}

/** Headers that carry credentials: dropped when a redirect leaves the original origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key']
const REDIRECTS = new Set([301, 302, 303, 307, 308])

export function createGuardedClient(policy: OutboundPolicy): HttpClient {
  return {
    async request(input, init = {}) {
      const deadline = new AbortController()
      const total = setTimeout(
        () =>
          deadline.abort(
            new OutboundError('timeout', `no complete answer within ${policy.totalTimeoutMs} ms`),
          ),
        policy.totalTimeoutMs,
      )
      try {
        return await exchange(policy, init, deadline.signal, parseUrl(input))
      } finally {
        clearTimeout(total)
      }
    },
  }
}

function parseUrl(input: string | URL): URL {
  try {
    return new URL(input)
  } catch {
    throw new OutboundError('refused', `${String(input)} is not an absolute URL`)
  }
}

async function exchange(
  policy: OutboundPolicy,
  init: OutboundRequest,
  signal: AbortSignal,
  first: URL,
): Promise<OutboundResponse> {
  let url = first
  let method = (init.method ?? 'GET').toUpperCase()
  let body = init.body
  const headers = new Headers(init.headers)
  const maxRedirects = init.redirect === 'follow' ? (init.maxRedirects ?? 3) : 0
  for (let hop = 0; ; hop++) {
    const address = await vet(policy, url, signal)
    const response = await connect(policy, url, address, { method, headers, body, signal })
    const headersAt = performance.now()
    const location = response.headers.get('location')
    if (REDIRECTS.has(response.status) && location !== null && init.redirect !== 'manual') {
      await response.body?.cancel().catch(() => {})
      const next = resolveLocation(url, location)
      if (init.redirect !== 'follow' || hop >= maxRedirects)
        throw new OutboundError('redirect', `${url.origin} redirected to ${next?.href ?? location}`)
      if (next === null) throw new OutboundError('redirect', `${url.origin} redirected to ${location}`)
      // Credentials were given for the first origin only (RFC 9110 §15.4: a client must not
      // forward them blindly); the next hop is vetted like the first at the top of the loop.
      if (next.origin !== first.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name)
      // RFC 9110 §15.4.4 (303), and what browsers do for 301/302 after a POST: the next is a GET.
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = 'GET'
        body = undefined
        headers.delete('content-type')
      }
      url = next
      continue
    }
    const read = await readCapped(response, policy, signal, init.overflow ?? 'fail')
    return answer(response, url, read, headersAt)
  }
}

function resolveLocation(base: URL, location: string): URL | null {
  try {
    return new URL(location, base)
  } catch {
    return null
  }
}

/** Scheme, then every address of the host (no partial trust); the address to connect to. */
async function vet(policy: OutboundPolicy, url: URL, signal: AbortSignal): Promise<string> {
  const httpAllowed = policy.allowPrivate && url.protocol === 'http:'
  if (url.protocol !== 'https:' && !httpAllowed)
    throw new OutboundError('refused', `${url.origin} must use https, not ${url.protocol}`)
  // URL keeps IPv6 literals in brackets; the address checks want the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const addresses = isIP(host) ? [host] : await resolveHost(policy.dns, host, signal)
  if (!policy.allowPrivate) {
    const inside = addresses.find((address) => !isPublicAddress(address))
    if (inside !== undefined)
      throw new OutboundError('refused', `${host} is or resolves to a non-public address (${inside})`)
  }
  return addresses[0]!
}

async function resolveHost(dns: DnsResolver, host: string, signal: AbortSignal): Promise<string[]> {
  let answers: Awaited<ReturnType<DnsResolver['resolve']>>[]
  try {
    answers = await untilAborted(Promise.all([dns.resolve(host, 'A'), dns.resolve(host, 'AAAA')]), signal)
  } catch (error) {
    if (error instanceof OutboundError) throw error
    throw new OutboundError('unresolved', `resolving ${host}: ${messageOf(error)}`)
  }
  const addresses = answers.flatMap((answer) =>
    answer.status === 'ok'
      ? answer.records.flatMap((r) => (r.type === 'A' || r.type === 'AAAA' ? [r.address] : []))
      : [],
  )
  if (addresses.length === 0) throw new OutboundError('unresolved', `${host} has no address`)
  return addresses
}

/** The request to the vetted address, failing past the connect deadline or the total one. */
async function connect(
  policy: OutboundPolicy,
  url: URL,
  address: string,
  request: { method: string; headers: Headers; body: string | undefined; signal: AbortSignal },
): Promise<Response> {
  const attempt = new AbortController()
  const relay = () => attempt.abort(request.signal.reason)
  if (request.signal.aborted) throw request.signal.reason
  request.signal.addEventListener('abort', relay, { once: true })
  const connectTimer = setTimeout(
    () =>
      attempt.abort(
        new OutboundError('timeout', `${url.origin} sent no answer within ${policy.connectTimeoutMs} ms`),
      ),
    policy.connectTimeoutMs,
  )
  try {
    return await pinnedFetch(url, address, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: attempt.signal,
      ...(policy.tls ? { tls: policy.tls } : {}),
    })
  } catch (error) {
    if (attempt.signal.aborted && attempt.signal.reason instanceof OutboundError) throw attempt.signal.reason
    throw new OutboundError('connect', `${url.origin}: ${messageOf(error)}`)
  } finally {
    clearTimeout(connectTimer)
    request.signal.removeEventListener('abort', relay)
  }
}

/** The body, streamed and counted: never more than the cap is held, the rest is cancelled unread. */
async function readCapped(
  response: Response,
  policy: OutboundPolicy,
  signal: AbortSignal,
  overflow: 'fail' | 'truncate',
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const cap = policy.maxResponseBytes
  const tooLarge = () => new OutboundError('too_large', `the answer is larger than ${cap} bytes`)
  const declared = Number(response.headers.get('content-length'))
  if (overflow === 'fail' && Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => {})
    throw tooLarge()
  }
  if (response.body === null) return { bytes: new Uint8Array(0), truncated: false }
  const reader = response.body.getReader()
  const cancel = () => reader.cancel().catch(() => {})
  signal.addEventListener('abort', cancel, { once: true })
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (done) break
      if (size + value.byteLength > cap) {
        await cancel()
        if (overflow === 'fail') throw tooLarge()
        chunks.push(value.subarray(0, cap - size))
        size = cap
        truncated = true
        break
      }
      chunks.push(value)
      size += value.byteLength
    }
  } catch (error) {
    if (error instanceof OutboundError && error.kind === 'too_large') throw error
    // A reset or the deadline mid-body: a snippet keeps what came, anything else fails.
    if (overflow === 'fail')
      throw signal.aborted ? signal.reason : new OutboundError('connect', messageOf(error))
    truncated = true
  } finally {
    signal.removeEventListener('abort', cancel)
  }
  if (signal.aborted) {
    if (overflow === 'fail') throw signal.reason
    truncated = true
  }
  return { bytes: concat(chunks, size), truncated }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

function answer(
  response: Response,
  url: URL,
  read: { bytes: Uint8Array; truncated: boolean },
  headersAt: number,
): OutboundResponse {
  const text = () => new TextDecoder().decode(read.bytes)
  return {
    status: response.status,
    headers: response.headers,
    url,
    body: read.bytes,
    truncated: read.truncated,
    headersAt,
    text,
    json: () => JSON.parse(text()),
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason)
    signal.addEventListener('abort', stop, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop))
  })
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message
  }
  return String(error)
}

/**
 * The client as a `fetch` for libraries that take one (jose's remote key set). The body handed
 * back is the capped one; encodings are gone (the body is already decoded), so only the media type
 * is kept.
 */
export function asFetch(client: HttpClient): typeof fetch {
  const guarded = async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input)
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const answer = await client.request(url, {
      method: init?.method ?? 'GET',
      headers,
      redirect: init?.redirect === 'follow' ? 'follow' : init?.redirect === 'manual' ? 'manual' : 'error',
    })
    const type = answer.headers.get('content-type')
    return new Response(answer.status === 204 || answer.status === 304 ? null : (answer.body as BodyInit), {
      status: answer.status,
      headers: type === null ? {} : { 'content-type': type },
    })
  }
  return guarded as typeof fetch
}
