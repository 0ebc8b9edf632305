// A floor for bench/api.ts: a bare Elysia route that runs the real route's list query (the page of
// domains with its window count, prepared, through postgres.js with the service's pool size) and
// returns the rows as they come. No authentication, no limiter, no presentation, no validation:
// what one round trip to PostgreSQL with this driver costs on top of the bare route. The real
// route cannot be faster than this; its distance from it is the service's own cost.
// Run as its own process (PORT, DATABASE_URL, BENCH_ACCOUNT_ID).
import { Elysia } from 'elysia'
import postgres from 'postgres'

const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {} })
const account = process.env.BENCH_ACCOUNT_ID!
const LIST = `select *, count(*) over () as total from domains where account_id = $1
  order by name limit $2 offset $3`
const app = new Elysia()
  .get('/api/v1/domains', async () => ({
    data: await sql.unsafe(LIST, [account, 25, 0], { prepare: true }),
  }))
  .listen({ port: Number(process.env.PORT), hostname: '127.0.0.1' })
console.log(JSON.stringify({ msg: 'floor server listening', port: app.server?.port }))
process.on('SIGTERM', () => process.exit(0))
