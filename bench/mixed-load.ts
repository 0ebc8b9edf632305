// bun run bench:mixed — issue #20: the API's latency while the same process digests reports, and
// the large report's time and memory, measured from outside the service over HTTP. One service
// process as deployed by default (`bun src/main.ts`, ROLE=all, on PostgreSQL: TEST_DATABASE_URL's
// server, a fresh database); the read load comes from bench/load.ts in its own process (10
// keep-alive connections of authenticated `GET /api/v1/domains`), the reports from this process
// through the HTTP intake. Everything runs on one machine, so every figure carries the machine's
// load average beside it.
//
// BENCH_CONNECTIONS sets the read load's connections (10).
// BENCH_SERVICE_ENV="NAME=value ..." passes settings to the service: run two variants one after
// the other (alternating) to compare them, since the machine's load moves between runs.
import { loadavg } from 'node:os'
import { sql } from 'drizzle-orm'
import { createAccount, createToken } from '../domain/accounts/use-cases.ts'
import { rowsOf } from '../infrastructure/db/database.ts'
import { stores, systemRandom } from '../src/compose.ts'
import { createTestDatabase } from '../tests/support/test-db.ts'
import { type Figure, report } from './report.ts'
import { aggregateXml, reportEmail } from './report-generator.ts'
import { serviceEnv } from './service-env.ts'

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const SMALL_REPORTS = Number(process.env.BENCH_SMALL_REPORTS ?? 500)
const LARGE_RECORDS = 100_000
const SECRET = 'bench-intake-secret-0123456789abcdef'
const root = new URL('../', import.meta.url).pathname
const load1 = () => loadavg()[0]!.toFixed(2)
// BENCH_ONLY=small,alone,loaded runs some of the three digestions (comma-separated).
const only = (part: string) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(part)

const db = await createTestDatabase()
if (db.url === null) throw new Error('bench:mixed needs PostgreSQL (TEST_DATABASE_URL)')
const s = stores(db.database)
const created = await createAccount(
  { accounts: s.accounts, random: systemRandom, hashPassword: async () => 'x' },
  { email: 'bench@example.com' },
)
if (!created.ok) throw new Error('account')
const account = created.value
const domains = Array.from({ length: 20 }, (_, i) => `brand${i}.example`)
for (const name of domains)
  await db.database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
    values (${account.accountId}, ${name}, 'x', now())`)
const token = await createToken(
  { accounts: s.accounts, tokens: s.tokens, random: systemRandom },
  { email: 'bench@example.com', name: 'bench', now: new Date() },
)
if (!token.ok) throw new Error('token')
const bearer = `Bearer ${token.value.value}`
const recipient = `${account.ingestKey}@in.bench.test`

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

const extra = serviceEnv()
const port = freePort()
const base = `http://127.0.0.1:${port}`
const service = Bun.spawn(['bun', 'src/main.ts'], {
  cwd: root,
  env: {
    ...process.env,
    ROLE: 'all',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: db.url,
    SECRET_KEY: '11'.repeat(32),
    INGEST_DOMAIN: 'in.bench.test',
    INGEST_SECRET: SECRET,
    RATE_LIMIT_API_PER_MINUTE: '10000000',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    ...extra,
  },
  // The request log is written, as in production, and read only for the report processes' lines.
  stdout: 'pipe',
  stderr: 'inherit',
})
const pid = service.pid
// A large report is digested by a report process of the service (INGEST_PROCESS_BYTES): its peak
// RSS is the kernel's figure for that process, from the line the service logs when it exits.
// BENCH_SERVICE_LOG=path keeps the service's log lines (requests, jobs) for a look afterwards.
const serviceLog = process.env.BENCH_SERVICE_LOG ? Bun.file(process.env.BENCH_SERVICE_LOG).writer() : null
const ownProcess = extra.INGEST_PROCESS_BYTES !== '0'
const childRuns: { peak_rss_bytes: number; cpu_ms: number }[] = []
void (async () => {
  let buffer = ''
  const decoder = new TextDecoder()
  for await (const chunk of service.stdout) {
    buffer += decoder.decode(chunk, { stream: true })
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    if (serviceLog !== null) serviceLog.write(lines.map((line) => `${line}\n`).join(''))
    for (const line of lines)
      if (line.includes('"message digested by a report process"')) childRuns.push(JSON.parse(line))
  }
})()
/**
 * The report process that digested the report whose run started after `runs` lines, once it has
 * exited (after its per-source merge, past the summary's total): waited for after the read load.
 */
async function childOf(runs: number): Promise<{ peak: number; note: string }> {
  const deadline = Date.now() + 30_000
  while (ownProcess && childRuns.length === runs && Date.now() < deadline) await Bun.sleep(50)
  const run = childRuns.length > runs ? childRuns.at(-1)! : null
  return run === null
    ? { peak: 0, note: '' }
    : {
        peak: run.peak_rss_bytes,
        note: `; its report process ${Math.round(run.peak_rss_bytes / 1e6)} MB (${run.cpu_ms} ms CPU)`,
      }
}

async function untilUp() {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (service.exitCode !== null) throw new Error(`service exited with ${service.exitCode}`)
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await Bun.sleep(100)
  }
  throw new Error('service did not come up')
}

interface Run {
  requests: number
  duration_us: number
  errors: Record<string, number>
  latency_us: { mean: number; p50: number; p90: number; p99: number; max: number }
}

/** Reads under load until `during` settles (or for `seconds`): the load generator's figures. */
async function readLoad(during: (() => Promise<unknown>) | number): Promise<Run & { rps: number }> {
  const seconds = typeof during === 'number' ? String(during) : 'stdin'
  const child = Bun.spawn(
    [
      'bun',
      `${root}bench/load.ts`,
      `${base}/api/v1/domains`,
      String(CONNECTIONS),
      seconds,
      `Authorization: ${bearer}`,
    ],
    { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' },
  )
  const out = new Response(child.stdout).text()
  if (typeof during !== 'number') {
    // The load generator's connections are open before the work starts.
    await Bun.sleep(500)
    await during().finally(() => child.stdin.end())
  }
  const text = await out
  if ((await child.exited) !== 0) throw new Error(`load generator failed:\n${text}`)
  const line = text.split('\n').find((l) => l.startsWith('WRK_JSON '))
  if (line === undefined) throw new Error(`no figures from the load generator:\n${text}`)
  const run = JSON.parse(line.slice('WRK_JSON '.length)) as Run
  return { ...run, rps: run.requests / (run.duration_us / 1e6) }
}

async function post(bytes: Uint8Array): Promise<string> {
  const response = await fetch(`${base}/api/v1/ingest/messages?recipient=${recipient}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'message/rfc822' },
    body: bytes as Uint8Array<ArrayBuffer>,
  })
  const body = (await response.json()) as { data?: { id: string } }
  if (response.status !== 202 || !body.data) throw new Error(`intake answered ${response.status}`)
  return body.data.id
}

async function pendingMessages(): Promise<number> {
  return rowsOf<{ n: number }>(
    await db.database.db.execute(
      sql`select count(*)::int as n from ingest_messages where status = 'pending'`,
    ),
  )[0]!.n
}

async function vm(field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(await Bun.file(`/proc/${pid}/status`).text())
  if (match === null) throw new Error(`no ${field}`)
  return Number(match[1]) * 1024
}

/** 500 small reports (1-20 records, gzipped, one an email), posted by 8 clients, until all are stored. */
async function digestSmall(round: number): Promise<{ seconds: number }> {
  const emails = Array.from({ length: SMALL_REPORTS }, (_, i) => {
    const domain = domains[i % domains.length]!
    const reportId = `small-${round}-${i}`
    const xml = aggregateXml({ domain, reportId, records: 1 + (i % 20), seed: round * 10_000 + i + 7 })
    return reportEmail({ to: recipient, xml, reportId, domain })
  })
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < emails.length) await post(emails[next++]!)
    }),
  )
  while ((await pendingMessages()) > 0) await Bun.sleep(50)
  return { seconds: (performance.now() - started) / 1000 }
}

async function summaryMessages(domain: string): Promise<number> {
  const response = await fetch(`${base}/api/v1/dmarc-reports/domains/${domain}/summary?days=7`, {
    headers: { authorization: bearer },
  })
  const body = (await response.json()) as { data?: { totals: { messages: number } } }
  if (body.data === undefined) throw new Error(`summary answered ${response.status}`)
  return body.data.totals.messages
}

/** One 100,000-record report over HTTP, until its domain's summary shows its total. */
async function digestLarge(domain: string, reportId: string, seed: number) {
  let xml: string | null = aggregateXml({ domain, reportId, records: LARGE_RECORDS, seed })
  let expected = 0
  for (const m of xml.matchAll(/<count>(\d+)<\/count>/g)) expected += Number(m[1])
  const email = reportEmail({ to: recipient, xml, reportId, domain })
  // The domain's small reports are in its summary already.
  const shown = await summaryMessages(domain)
  xml = null
  Bun.gc(true)
  await Bun.sleep(1000)
  const before = await vm('VmRSS')
  return {
    before,
    run: async () => {
      const runs = childRuns.length
      await Bun.write(`/proc/${pid}/clear_refs`, '5')
      const started = performance.now()
      await post(email)
      while ((await summaryMessages(domain)) !== shown + expected) await Bun.sleep(25)
      return { seconds: (performance.now() - started) / 1000, peak: await vm('VmHWM'), runs }
    },
  }
}

const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`
const figures: Figure[] = []
try {
  await untilUp()
  // Warm: code loaded and compiled, connections open.
  await post(
    reportEmail({
      to: recipient,
      xml: aggregateXml({ domain: domains[19]!, reportId: 'warm', records: 500, seed: 2 }),
      reportId: 'warm',
      domain: domains[19]!,
    }),
  )
  while ((await pendingMessages()) > 0) await Bun.sleep(50)
  await readLoad(3)
  const quietLoad = load1()
  const quiet = await readLoad(5)
  figures.push({
    metric: `GET /domains, quiet, ${CONNECTIONS} connections: req/s, p50 / p99 (load ${quietLoad})`,
    value: `${quiet.rps.toFixed(0)} /s, ${ms(quiet.latency_us.p50)} / ${ms(quiet.latency_us.p99)}`,
    target: 'reported',
    ok: true,
  })

  if (only('small')) {
    const smallLoad = load1()
    let small = { seconds: 0 }
    const underSmall = await readLoad(() =>
      digestSmall(1).then((r) => {
        small = r
      }),
    )
    const smallErrors = Object.values(underSmall.errors).reduce((a, b) => a + b, 0)
    figures.push(
      {
        metric: `GET /domains while ${SMALL_REPORTS} small reports are digested: p99 (p50; load ${smallLoad})`,
        value: `${ms(underSmall.latency_us.p99)} (${ms(underSmall.latency_us.p50)}, ${underSmall.rps.toFixed(0)} /s, ${smallErrors} errors)`,
        target: '≤ 50 ms',
        ok: underSmall.latency_us.p99 <= 50_000 && smallErrors === 0,
      },
      {
        metric: `${SMALL_REPORTS} small reports under that read load: posted → all stored`,
        value: `${small.seconds.toFixed(2)} s (${(SMALL_REPORTS / small.seconds).toFixed(0)} /s)`,
        target: 'reported (part 2 measures the rate)',
        ok: true,
      },
    )
  }
  if (only('alone')) {
    const aloneLoad = load1()
    const alone = await digestLarge(domains[1]!, 'big-alone', 11)
    const large = await alone.run()
    const largeChild = await childOf(large.runs)
    figures.push(
      {
        metric: `100,000-record report alone: intake → summary shows its total (load ${aloneLoad})`,
        value: `${large.seconds.toFixed(2)} s`,
        target: '≤ 2 s',
        ok: large.seconds <= 2,
      },
      {
        metric: `100,000-record report alone: peak RSS (VmHWM; ${Math.round(alone.before / 1e6)} MB before)${largeChild.note}`,
        value: `${Math.round(large.peak / 1e6)} MB`,
        target: '≤ 256 MB',
        ok: large.peak <= 256e6 && largeChild.peak <= 256e6,
      },
    )
  }
  if (only('loaded')) {
    const loadedLoad = load1()
    const loaded = await digestLarge(domains[2]!, 'big-loaded', 12)
    let underLarge = { seconds: 0, peak: 0, runs: 0 }
    const reads = await readLoad(() =>
      loaded.run().then((r) => {
        underLarge = r
      }),
    )
    const loadedChild = await childOf(underLarge.runs)
    const largeErrors = Object.values(reads.errors).reduce((a, b) => a + b, 0)
    figures.push(
      {
        metric: `GET /domains while a 100,000-record report is digested: p99 (p50; load ${loadedLoad})`,
        value: `${ms(reads.latency_us.p99)} (${ms(reads.latency_us.p50)}, ${reads.rps.toFixed(0)} /s, ${largeErrors} errors)`,
        target: '≤ 50 ms',
        ok: reads.latency_us.p99 <= 50_000 && largeErrors === 0,
      },
      {
        metric: `100,000-record report under that read load: intake → summary; peak RSS (${Math.round(loaded.before / 1e6)} MB before)`,
        value: `${underLarge.seconds.toFixed(2)} s; ${Math.round(underLarge.peak / 1e6)} MB${loadedChild.note}`,
        target: 'reported',
        ok: true,
      },
    )
  }
  if (Object.keys(extra).length > 0)
    figures.push({
      metric: 'service settings (BENCH_SERVICE_ENV)',
      value: JSON.stringify(extra),
      target: '-',
      ok: true,
    })
} finally {
  await serviceLog?.end()
  service.kill('SIGTERM')
  await service.exited
  await db.drop()
}
await report('mixed-load', figures)
process.exit(0)
