import type { Server } from 'bun'
import { newWebhookSecret } from '../../domain/webhooks/payload.ts'

// A customer's webhook endpoint, for tests: a real HTTP(S) server on 127.0.0.1 that checks each
// delivery the way docs/webhooks.md tells customers to (the code between the markers below is the
// documented example, verbatim; tests/infrastructure/http/webhook-docs.test.ts keeps the two equal),
// records every arrival, and can be scripted to misbehave: fail with a status, hang, redirect, or
// answer with a huge (or endless) body.

// --- receiver example (docs/webhooks.md) ---
export async function verifyDelivery(
  secret: string, // whsec_..., used as is
  rawBody: string, // the request body exactly as received, before any JSON parsing
  signature: string, // the X-Webhook-Signature header
  now = new Date(),
): Promise<boolean> {
  const utf8 = new TextEncoder()
  const hmac = { name: 'HMAC', hash: 'SHA-256' }
  const key = await crypto.subtle.importKey('raw', utf8.encode(secret), hmac, false, ['verify'])
  const hex = /^[0-9a-f]{64}$/.test(signature) ? signature.match(/../g)! : null
  const mac = hex && Uint8Array.from(hex, (pair) => Number.parseInt(pair, 16))
  // subtle.verify compares in constant time; a plain === on hex strings would leak timing.
  if (!mac || !(await crypto.subtle.verify('HMAC', key, mac, utf8.encode(rawBody)))) return false
  // Replay protection: `timestamp` is signed, and it is the time of this attempt (retries included).
  const sent = Date.parse(JSON.parse(rawBody).timestamp)
  return Math.abs(now.getTime() - sent) <= 5 * 60 * 1000
}
// --- end of receiver example ---

export interface Arrival {
  at: Date
  method: string
  path: string
  headers: Record<string, string>
  body: string
  /** Signature valid and timestamp within 5 minutes of the receiver's clock. */
  verified: boolean
  /** What the receiver did with it: a status, or `hang`. */
  answer: number | 'hang'
}

type Behaviour =
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'redirect'; status: number; location: string }
  | { kind: 'body'; bytes: number }

export interface WebhookReceiver {
  /** `http(s)://127.0.0.1:<port>/hooks`. */
  readonly url: string
  readonly port: number
  readonly secret: string
  readonly arrivals: Arrival[]
  /** The next `count` requests get `status` (after being recorded and verified). */
  failNext(count: number, status: number): void
  /** The next `count` requests never get an answer (until the client gives up or the server stops). */
  hangNext(count?: number): void
  redirectNext(count?: number, status?: number, location?: string): void
  /** The next `count` requests get a 200 whose body is `bytes` long (Infinity: it never ends). */
  hugeBodyNext(bytes: number, count?: number): void
  stop(): Promise<void>
}

const CHUNK = new Uint8Array(64 * 1024).fill(0x78)

export function startWebhookReceiver(
  options: {
    secret?: string
    /** The receiver's clock for the tolerance check; the real clock by default. */
    now?: () => Date
    tls?: { cert: string; key: string }
  } = {},
): WebhookReceiver {
  const secret = options.secret ?? newWebhookSecret((n) => crypto.getRandomValues(new Uint8Array(n)))
  const arrivals: Arrival[] = []
  const script: Behaviour[] = []
  const hanging = new Set<() => void>()
  const queue = (behaviour: Behaviour, count: number) => {
    for (let i = 0; i < count; i++) script.push(behaviour)
  }

  async function handle(request: Request): Promise<Response> {
    const body = await request.text()
    const signature = request.headers.get('x-webhook-signature') ?? ''
    const verified = await verifyDelivery(secret, body, signature, options.now?.()).catch(() => false)
    const behaviour = script.shift()
    const arrival: Arrival = {
      at: new Date(),
      method: request.method,
      path: new URL(request.url).pathname,
      headers: Object.fromEntries(request.headers),
      body,
      verified,
      answer: 200,
    }
    arrivals.push(arrival)
    switch (behaviour?.kind) {
      case 'status':
        arrival.answer = behaviour.status
        return new Response(`scripted ${behaviour.status}`, { status: behaviour.status })
      case 'redirect':
        arrival.answer = behaviour.status
        return new Response(null, { status: behaviour.status, headers: { location: behaviour.location } })
      case 'hang':
        arrival.answer = 'hang'
        await new Promise<void>((resolve) => {
          hanging.add(resolve)
          request.signal.addEventListener('abort', () => resolve())
        })
        return new Response('too late', { status: 200 })
      case 'body':
        return new Response(hugeBody(behaviour.bytes, request.signal), {
          headers: { 'content-type': 'text/plain' },
        })
      default:
        // What a customer does: refuse what does not verify, acknowledge the rest at once.
        arrival.answer = verified ? 200 : 401
        return verified ? Response.json({ received: true }) : new Response('bad signature', { status: 401 })
    }
  }

  const server: Server<unknown> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    ...(options.tls ? { tls: options.tls } : {}),
    fetch: handle,
  })
  const scheme = options.tls ? 'https' : 'http'
  return {
    url: `${scheme}://127.0.0.1:${server.port}/hooks`,
    port: server.port!,
    secret,
    arrivals,
    failNext: (count, status) => queue({ kind: 'status', status }, count),
    hangNext: (count = 1) => queue({ kind: 'hang' }, count),
    redirectNext: (count = 1, status = 302, location = '/elsewhere') =>
      queue({ kind: 'redirect', status, location }, count),
    hugeBodyNext: (bytes, count = 1) => queue({ kind: 'body', bytes }, count),
    async stop() {
      for (const resolve of hanging) resolve()
      await server.stop(true)
    },
  }
}

/** A body of `bytes` bytes made on demand, so an endless or 10 MB answer costs the receiver nothing. */
function hugeBody(bytes: number, signal: AbortSignal): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes || signal.aborted) return controller.close()
      const chunk = bytes - sent < CHUNK.length ? CHUNK.subarray(0, bytes - sent) : CHUNK
      sent += chunk.length
      controller.enqueue(chunk)
    },
  })
}
