// The baseline for bench/api.ts: a bare Elysia route answering GET /api/v1/domains with the same
// JSON the real route returned, serialized per request as Elysia does for the real one. No plugins,
// no authentication, no database: what the framework and runtime cost by themselves.
// Run as its own process (PORT, BENCH_BODY_FILE), so the load generator never shares its event loop.
import { Elysia } from 'elysia'

const body = JSON.parse(await Bun.file(process.env.BENCH_BODY_FILE!).text())
const app = new Elysia()
  .get('/api/v1/domains', () => body)
  .listen({ port: Number(process.env.PORT), hostname: '127.0.0.1' })
console.log(JSON.stringify({ msg: 'bare server listening', port: app.server?.port }))
process.on('SIGTERM', () => process.exit(0))
