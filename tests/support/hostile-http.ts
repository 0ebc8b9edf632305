// Real HTTP servers on loopback (port 0) that misbehave the ways an outbound request must survive
// (docs/outbound-http.md): redirect to another origin, stall before or after the headers, stream
// far more than any cap, answer junk. Each records the requests it received, so a test can tell
// whether a redirect's target was reached and with which headers.

import { afterEach } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'

/** Registers an afterEach that stops every server passed to the returned function. */
export function stopAfterEach(): <T extends { stop(): unknown }>(server: T) => T {
  const servers: { stop(): unknown }[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop()
  })
  return (server) => {
    servers.push(server)
    return server
  }
}

export interface Received {
  method: string
  path: string
  headers: Record<string, string>
}

export interface HostileServer {
  /** `http://127.0.0.1:<port>` */
  origin: string
  port: number
  requests: Received[]
  stop(): Promise<void>
}

/** A server whose every request is answered by `answer` (and recorded first). */
export function serve(answer: (request: Request) => Response | Promise<Response>): HostileServer {
  const requests: Received[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      requests.push({
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers: Object.fromEntries(request.headers),
      })
      return answer(request)
    },
  })
  return {
    origin: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests,
    stop: () => server.stop(true),
  }
}

/** A redirect to `location` (absolute, or a path on this server). */
export const redirectTo = (location: string, status = 302) =>
  serve(() => new Response(null, { status, headers: { location } }))

/** Pull-based: nothing is produced before it is read, so a cancelled read stops the server too. */
export function endlessBody(totalBytes: number, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(chunkBytes).fill(0x61)
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close()
      const size = Math.min(chunkBytes, totalBytes - sent)
      controller.enqueue(size === chunkBytes ? chunk : chunk.subarray(0, size))
      sent += size
    },
  })
}

/** 200 with a JSON media type and `totalBytes` of body, chunked (no Content-Length to go by). */
export const hugeAnswer = (totalBytes: number) =>
  serve(() => new Response(endlessBody(totalBytes), { headers: { 'content-type': 'application/json' } }))

/** Headers at once, then a body that never ends nor sends anything more. */
export const stallingBody = () =>
  serve(
    () =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"res')) }), {
        headers: { 'content-type': 'application/json' },
      }),
  )

/** Accepts connections and reads requests, but never answers: no status, no headers. */
export function silentServer(): { origin: string; stop(): void; connections: () => number } {
  const sockets = new Set<Socket<unknown>>()
  let accepted = 0
  const listener: TCPSocketListener<unknown> = Bun.listen<unknown>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        accepted++
        sockets.add(socket)
      },
      data() {},
      close(socket) {
        sockets.delete(socket)
      },
    },
  })
  return {
    origin: `http://127.0.0.1:${listener.port}`,
    connections: () => accepted,
    stop() {
      for (const socket of sockets) socket.end()
      listener.stop(true)
    },
  }
}

/** The largest resident set seen while `run` runs (sampled every 5 ms), over the RSS before it. */
export async function peakRssGrowth<T>(run: () => Promise<T>): Promise<{ result: T; growthBytes: number }> {
  Bun.gc(true)
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 5)
  try {
    const result = await run()
    peak = Math.max(peak, process.memoryUsage().rss)
    return { result, growthBytes: peak - before }
  } finally {
    clearInterval(sampler)
  }
}
