// A fallback load generator for bench/api.ts where `wrk` is not installed (`apt-get install wrk`):
// CONNECTIONS keep-alive connections, each sending the next request as soon as the previous answer
// is read, for SECONDS. It runs as its own process so it never shares the server's event loop, and
// prints the same `WRK_JSON {...}` line as bench/wrk-report.lua. It is slower than wrk (one
// JavaScript thread building every request), so a bare route's figure is a floor, not a ceiling.
//
//   bun bench/load.ts URL CONNECTIONS SECONDS [HEADER: VALUE]
//
// SECONDS `stdin` runs until standard input closes (bench/mixed-load.ts: as long as a digestion
// lasts, whatever that is).

export {}

const [url, connectionsArg, secondsArg, header] = process.argv.slice(2)
if (url === undefined) throw new Error('usage: bun bench/load.ts URL CONNECTIONS SECONDS [HEADER: VALUE]')
const connections = Number(connectionsArg ?? 50)
const untilStdin = secondsArg === 'stdin'
const seconds = untilStdin ? Number.POSITIVE_INFINITY : Number(secondsArg ?? 10)
const headers: Record<string, string> = {}
if (header !== undefined) {
  const colon = header.indexOf(':')
  headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim()
}

const latencies: number[] = []
const errors = { connect: 0, read: 0, write: 0, status: 0, timeout: 0 }
let bytes = 0
const started = performance.now()
let deadline = started + seconds * 1000
if (untilStdin)
  void (async () => {
    for await (const _ of Bun.stdin.stream()) {
    }
    deadline = 0
  })()

await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const sent = performance.now()
      try {
        const response = await fetch(url, { headers, signal: AbortSignal.timeout(2000) })
        bytes += (await response.arrayBuffer()).byteLength
        if (response.status < 200 || response.status > 299) errors.status++
        latencies.push((performance.now() - sent) * 1000)
      } catch (error) {
        if ((error as Error).name === 'TimeoutError') errors.timeout++
        else errors.read++
      }
    }
  }),
)

const durationUs = (performance.now() - started) * 1000
latencies.sort((a, b) => a - b)
const at = (p: number) =>
  Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0)
const mean = latencies.reduce((sum, l) => sum + l, 0) / Math.max(1, latencies.length)
console.log(
  `WRK_JSON ${JSON.stringify({
    requests: latencies.length,
    duration_us: Math.round(durationUs),
    bytes,
    errors,
    latency_us: { mean, p50: at(50), p90: at(90), p99: at(99), max: Math.round(latencies.at(-1) ?? 0) },
  })}`,
)
