import { isIP } from 'node:net'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { isPublicAddress } from './address-guard.ts'
import { readCapped } from './capped-body.ts'
import { failureReason, OutboundError } from './outbound-error.ts'
import { pinnedFetch } from './pinned-fetch.ts'

// The one way out to HTTP (docs/outbound-http.md): webhooks, MTA-STS policies, DNS provider APIs
// and OAuth all send through a client made here, with the limits of their use. Every request, and
// every redirect hop, is vetted the same way: https (http only where private targets are allowed),
// the host resolved and every address checked against the SSRF rules (address-guard.ts), the
// connection pinned to the checked address (pinned-fetch.ts, against DNS rebinding). The answer is
// read under a byte cap, and connect and total deadlines bound the time. Credentials never follow a
// redirect to another origin.

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
    const deadline = connectDeadline(policy, url, signal)
    let response: Response
    try {
      const address = await vet(policy, url, deadline.signal)
      response = await connect(policy, url, address, { method, headers, body, signal: deadline.signal })
    } finally {
      deadline.clear()
    }
    const headersAt = performance.now()
    const location = response.headers.get('location')
    if (REDIRECTS.has(response.status) && location !== null && init.redirect !== 'manual') {
      await response.body?.cancel().catch(() => {})
      const next = resolveLocation(url, location)
      if (init.redirect !== 'follow' || hop >= maxRedirects)
        throw new OutboundError('redirect', `${url.origin} redirected to ${next?.href ?? location}`)
      if (next === null) throw new OutboundError('redirect', `${url.origin} redirected to ${location}`)
      // Credentials were given for the first origin only (the Fetch standard's HTTP-redirect fetch
      // drops Authorization on a cross-origin hop too); once dropped they stay dropped. The next
      // hop is vetted like the first at the top of the loop.
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
    const read = await readCapped(response, policy.maxResponseBytes, signal, init.overflow ?? 'fail')
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
    throw new OutboundError('unresolved', `resolving ${host}: ${failureReason(error)}`)
  }
  const addresses = answers.flatMap((answer) =>
    answer.status === 'ok'
      ? answer.records.flatMap((r) => (r.type === 'A' || r.type === 'AAAA' ? [r.address] : []))
      : [],
  )
  if (addresses.length === 0) throw new OutboundError('unresolved', `${host} has no address`)
  return addresses
}

/**
 * A signal for one hop until its status and headers: aborted by the connect deadline (resolving,
 * connecting, TLS, the server's first answer) or by the exchange's total deadline.
 */
function connectDeadline(
  policy: OutboundPolicy,
  url: URL,
  total: AbortSignal,
): { signal: AbortSignal; clear(): void } {
  const hop = new AbortController()
  const relay = () => hop.abort(total.reason)
  if (total.aborted) relay()
  else total.addEventListener('abort', relay, { once: true })
  const timer = setTimeout(
    () =>
      hop.abort(
        new OutboundError('timeout', `${url.origin} sent no answer within ${policy.connectTimeoutMs} ms`),
      ),
    policy.connectTimeoutMs,
  )
  return {
    signal: hop.signal,
    clear() {
      clearTimeout(timer)
      total.removeEventListener('abort', relay)
    },
  }
}

/** The request to the vetted address; a deadline's abort surfaces as its OutboundError. */
async function connect(
  policy: OutboundPolicy,
  url: URL,
  address: string,
  request: { method: string; headers: Headers; body: string | undefined; signal: AbortSignal },
): Promise<Response> {
  if (request.signal.aborted) throw request.signal.reason
  try {
    return await pinnedFetch(url, address, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: request.signal,
      ...(policy.tls ? { tls: policy.tls } : {}),
    })
  } catch (error) {
    if (request.signal.aborted && request.signal.reason instanceof OutboundError) throw request.signal.reason
    throw new OutboundError('connect', `${url.origin}: ${failureReason(error)}`)
  }
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
