// bun run bench:api — API throughput and latency (issue #9): authenticated `GET /api/v1/domains`
// (token lookup, the per-token rate limit and the domains query, all on PostgreSQL) against a bare
// Elysia route returning the same JSON, same machine, same run, 50 connections each.
//
// Shape: the service runs as it is deployed (`bun src/main.ts`, ROLE=api, on a fresh database on
// TEST_DATABASE_URL's server) and the bare route in bench/api-bare-server.ts, each in its own
// process; the load generator (wrk, or bench/load.ts without it) is a third, so it never takes the
// server's event loop. RATE_LIMIT_API_PER_MINUTE is raised so the limiter is paid for on every
// request but never refuses one: the figure is the limiter's cost, not its 429s.
import { sql } from 'drizzle-orm'
import { createAccount, createToken } from '../domain/accounts/use-cases.ts'
import { rowsOf } from '../infrastructure/db/database.ts'
import { stores, systemRandom } from '../src/compose.ts'
import { createTestDatabase } from '../tests/support/test-db.ts'
import { type Figure, report } from './report.ts'

const CONNECTIONS = 50
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10)
const WARMUP_SECONDS = 3
const root = new URL('../', import.meta.url).pathname

const db = await createTestDatabase()
if (db.url === null) throw new Error('bench:api needs PostgreSQL (TEST_DATABASE_URL)')
const s = stores(db.database)
const account = await createAccount(
  { accounts: s.accounts, random: systemRandom, hashPassword: async () => 'x' },
  { email: 'bench@example.com' },
)
if (!account.ok) throw new Error('account')
for (let i = 0; i < 20; i++) {
  await db.database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
    values (${account.value.accountId}, ${`brand${i}.example`}, 'x', now())`)
}
const token = await createToken(
  { accounts: s.accounts, tokens: s.tokens, random: systemRandom },
  { email: 'bench@example.com', name: 'bench', now: new Date() },
)
if (!token.ok) throw new Error('token')
const auth = `Authorization: Bearer ${token.value.value}`

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

async function untilUp(url: string, child: Bun.Subprocess) {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not come up`)
}

interface Run {
  requests: number
  duration_us: number
  errors: { connect: number; read: number; write: number; status: number; timeout: number }
  latency_us: { mean: number; p50: number; p90: number; p99: number; max: number }
}

// BENCH_GENERATOR=bun uses bench/load.ts even where wrk is installed.
const wrk = process.env.BENCH_GENERATOR === 'bun' ? null : Bun.which('wrk')
const generator = wrk ? 'wrk (1 thread)' : 'bench/load.ts'

async function load(url: string, seconds: number): Promise<Run & { rps: number }> {
  const command = wrk
    ? [
        wrk,
        '-t1',
        `-c${CONNECTIONS}`,
        `-d${seconds}s`,
        '--latency',
        '-s',
        `${root}bench/wrk-report.lua`,
        '-H',
        auth,
        url,
      ]
    : ['bun', `${root}bench/load.ts`, url, String(CONNECTIONS), String(seconds), auth]
  const child = Bun.spawn(command, { stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(child.stdout).text()
  if ((await child.exited) !== 0) throw new Error(`load generator failed:\n${out}`)
  const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '))
  if (line === undefined) throw new Error(`no figures from the load generator:\n${out}`)
  const run = JSON.parse(line.slice('WRK_JSON '.length)) as Run
  return { ...run, rps: run.requests / (run.duration_us / 1e6) }
}

async function measure(name: string, command: string[], env: Record<string, string>, probe: string) {
  const port = freePort()
  const child = Bun.spawn(command, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port) },
    // The service's request log (LOG_LEVEL) is written, as in production, and thrown away here.
    stdout: 'ignore',
    stderr: 'inherit',
  })
  try {
    await untilUp(`http://127.0.0.1:${port}${probe}`, child)
    const url = `http://127.0.0.1:${port}/api/v1/domains`
    const sample = await fetch(url, { headers: { authorization: auth.slice('Authorization: '.length) } })
    const body = await sample.text()
    if (sample.status !== 200) throw new Error(`${name}: ${sample.status} ${body}`)
    await load(url, WARMUP_SECONDS)
    const run = await load(url, SECONDS)
    console.log(
      `${name}: ${run.rps.toFixed(0)} req/s, p50 ${(run.latency_us.p50 / 1000).toFixed(2)} ms, p99 ${(run.latency_us.p99 / 1000).toFixed(2)} ms`,
    )
    return { run, body }
  } finally {
    child.kill('SIGTERM')
    await child.exited
  }
}

// The service first: its answer is the JSON the bare route will return.
const app = await measure(
  'service',
  ['bun', 'src/main.ts'],
  {
    ROLE: 'api',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    SECRET_KEY: '11'.repeat(32),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    RATE_LIMIT_API_PER_MINUTE: '10000000',
  },
  '/readyz',
)
const listed = JSON.parse(app.body) as { data: unknown[] }
if (listed.data.length !== 20) throw new Error(`expected 20 domains, got ${listed.data.length}`)
const counted = rowsOf<{ n: number }>(
  await db.database.db.execute(
    sql`select coalesce(sum(count), 0)::int as n from rate_limit_counters where key like 'api:%'`,
  ),
)[0]!.n
const bodyFile = `${root}bench/results/.api-body.json`
await Bun.write(bodyFile, app.body)
const bare = await measure(
  'bare Elysia',
  ['bun', 'bench/api-bare-server.ts'],
  { BENCH_BODY_FILE: bodyFile },
  '/api/v1/domains',
)
const floor = await measure(
  'floor (bare Elysia + the list query)',
  ['bun', 'bench/api-floor-server.ts'],
  { DATABASE_URL: db.url, BENCH_ACCOUNT_ID: account.value.accountId },
  '/api/v1/domains',
)
await db.drop()

const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`
const ratio = app.run.rps / bare.run.rps
const appErrors = Object.values(app.run.errors).reduce((a, b) => a + b, 0)
const figures: Figure[] = [
  {
    metric: 'load generator',
    value: generator,
    target: `${CONNECTIONS} connections, ${SECONDS} s each`,
    ok: true,
  },
  {
    metric: 'bare Elysia route: requests/s',
    value: `${bare.run.rps.toFixed(0)} /s`,
    target: 'reported',
    ok: true,
  },
  {
    metric: 'bare Elysia route: p50 / p99',
    value: `${ms(bare.run.latency_us.p50)} / ${ms(bare.run.latency_us.p99)}`,
    target: 'reported',
    ok: true,
  },
  {
    // Not a target: the same query through the same driver with nothing else (api-floor-server.ts).
    // When the floor itself is near 20% of the bare route, the target leaves the service no room.
    metric: 'floor: bare route + the list query, no auth',
    value: `${floor.run.rps.toFixed(0)} /s (${((floor.run.rps / bare.run.rps) * 100).toFixed(1)} % of bare)`,
    target: 'reported',
    ok: true,
  },
  {
    metric: 'GET /domains (auth, limit, query): requests/s',
    value: `${app.run.rps.toFixed(0)} /s`,
    target: `≥ ${(bare.run.rps * 0.2).toFixed(0)} /s (20% of bare)`,
    ok: ratio >= 0.2,
  },
  {
    metric: 'GET /domains: share of the bare route',
    value: `${(ratio * 100).toFixed(1)} %`,
    target: '≥ 20 %',
    ok: ratio >= 0.2,
  },
  { metric: 'GET /domains: p50', value: ms(app.run.latency_us.p50), target: 'reported', ok: true },
  {
    metric: 'GET /domains: p99',
    value: ms(app.run.latency_us.p99),
    target: '< 25 ms',
    ok: app.run.latency_us.p99 < 25_000,
  },
  {
    metric: 'GET /domains: errors and non-2xx answers',
    value: String(appErrors),
    target: '0',
    ok: appErrors === 0,
  },
  {
    // Every request, warm-up included, passed through the limiter's counter: it was paid for.
    metric: 'GET /domains: requests counted by the rate limiter',
    value: String(counted),
    target: `≥ ${app.run.requests} (every request measured)`,
    ok: counted >= app.run.requests,
  },
]
await report('api', figures)
process.exit(0)
