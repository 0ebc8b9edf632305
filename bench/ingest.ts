// bun run bench:ingest — report intake on PostgreSQL (TEST_DATABASE_URL's server), printing each
// figure beside its target (issue #4). Not a test: it generates its own data in a fresh database.
import { sql } from 'drizzle-orm'
import { createToken } from '../domain/accounts/use-cases.ts'
import { rowsOf } from '../infrastructure/db/database.ts'
import { ingestJobDeps } from '../src/compose/ingest.ts'
import { housekeeping } from '../src/compose/maintenance.ts'
import { intake, systemRandom } from '../src/compose.ts'
import { processMessage } from '../src/jobs/ingest.ts'
import { startService } from '../tests/support/processes.ts'
import { benchAccount, benchRuntime } from './bench-runtime.ts'
import { ingestMemoryFigures } from './ingest-memory.ts'
import { smallReportFigures } from './ingest-small.ts'
import { cpuSince, startPeakRss } from './process-stats.ts'
import { type Figure, report } from './report.ts'
import { aggregateXml, reportEmail } from './report-generator.ts'

const figures: Figure[] = []

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await run()
  return { value, ms: performance.now() - started }
}

// BENCH_ONLY=large|queue|small|summary|memory runs one part (comma-separated for several).
const only = (part: string) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(part)
const { db, database, now, boss, runtime, s } = await benchRuntime({
  RATE_LIMIT_API_PER_MINUTE: '10000000',
  // INGEST_PARSE_THREAD_BYTES=n: a variant's setting (docs/ingestion.md).
  ...(process.env.INGEST_PARSE_THREAD_BYTES
    ? { INGEST_PARSE_THREAD_BYTES: process.env.INGEST_PARSE_THREAD_BYTES }
    : {}),
})
const account = await benchAccount(s, 'bench@example.com')
const recipient = account.recipient
const domains = Array.from({ length: 20 }, (_, i) => `brand${i}.example`)
for (const name of domains) {
  await database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
    values (${account.accountId}, ${name}, 'x', now())`)
}
const { accept, messages } = intake(runtime)
// A 100,000-record report is digested by a report process of its own (INGEST_PROCESS_BYTES,
// ROLE=all on PostgreSQL): its peak is the kernel's figure for that process, read from the line the
// job logs (docs/ingestion.md, "Large messages in a process of their own").
const childRuns: Record<string, unknown>[] = []
const jobDeps = {
  ...ingestJobDeps(runtime, { messages, forensicTls: s.forensicTls }),
  logger: {
    ...runtime.logger,
    info: (msg: string, fields?: Record<string, unknown>) => {
      if (msg === 'message digested by a report process' && fields !== undefined) childRuns.push(fields)
    },
  },
}

// 1. One report of 100,000 records (~42 MB of XML, gzipped in an email): intake to committed rows
// and rollups.
if (only('large')) {
  let xml: string | null = aggregateXml({ domain: domains[0]!, reportId: 'big-1', records: 100_000, seed: 1 })
  const email = reportEmail({ to: recipient, xml, reportId: 'big-1', domain: domains[0]! })
  const xmlBytes = xml.length
  // The service only ever holds the gzipped email: the generated XML is not part of its memory.
  xml = null
  Bun.gc(true)
  const baseline = process.memoryUsage().rss
  const peakRss = await startPeakRss()
  const started = performance.now()
  // The summary's total shows at the report's commit; its per-source rollup is merged right after
  // (docs/ingestion.md). Both are timed: the total by polling it, as a reader would.
  let shownAt: number | null = null
  const polling = (async () => {
    while (shownAt === null) {
      const [row] = rowsOf<{ messages: number | null }>(
        await database.db.execute(sql`select sum(messages)::bigint as messages from daily_domain_totals`),
      )
      if (Number(row?.messages ?? 0) > 0) shownAt = performance.now()
      else await Bun.sleep(10)
    }
  })()
  const accepted = await accept({ raw: email, recipient, source: 'http' })
  if (!accepted.ok) throw new Error(`accept: ${accepted.failure.code}`)
  await processMessage(jobDeps, accepted.value.id)
  const seconds = (performance.now() - started) / 1000
  await polling
  const shownSeconds = ((shownAt ?? performance.now()) - started) / 1000
  const peak = await peakRss.stop()
  const child = childRuns.at(-1)
  const stored = rowsOf<{ records: number; rollup: number }>(
    await database.db.execute(sql`select (select count(*) from aggregate_records)::int as records,
      (select sum(messages) from daily_rollups)::bigint as rollup`),
  )[0]!
  if (stored.records !== 100_000) throw new Error(`stored ${stored.records} records`)
  figures.push(
    {
      metric: 'XML size of the large report',
      value: `${(xmlBytes / 1e6).toFixed(1)} MB`,
      target: '~42 MB, 100,000 records',
      ok: xmlBytes > 35e6,
    },
    {
      metric: 'large report: intake → summary shows its total (records committed)',
      value: `${shownSeconds.toFixed(2)} s`,
      target: '≤ 2 s',
      ok: shownSeconds <= 2,
    },
    {
      metric: 'large report: intake → per-source rollup merged (sources view complete)',
      value: `${seconds.toFixed(2)} s`,
      target: 'reported (no target)',
      ok: true,
    },
    {
      metric: `large report: peak RSS (${peakRss.how}; process before it: ${Math.round(baseline / 1e6)} MB)`,
      value: `${Math.round(peak / 1e6)} MB`,
      target: '≤ 256 MB',
      ok: peak <= 256e6,
    },
    ...(child === undefined
      ? []
      : [
          {
            metric: `large report: peak RSS of its report process (kernel, ru_maxrss; ${child.cpu_ms} ms CPU)`,
            value: `${Math.round(Number(child.peak_rss_bytes) / 1e6)} MB`,
            target: '≤ 256 MB',
            ok: Number(child.peak_rss_bytes) <= 256e6,
          },
        ]),
  )
}

// 2. 2,000 typical reports (1-20 records, gzipped, one per email) through the queue and a worker.
if (only('queue')) {
  const emails = Array.from({ length: 2000 }, (_, i) => {
    const domain = domains[i % domains.length]!
    const xml = aggregateXml({ domain, reportId: `small-${i}`, records: 1 + (i % 20), seed: i + 7 })
    return reportEmail({ to: recipient, xml, reportId: `small-${i}`, domain })
  })
  // The deployment shape for volume: the API accepts, a separate ROLE=worker process parses and
  // stores (one Bun process is single-threaded; two processes use both cores).
  if (db.url === null) throw new Error('bench:ingest needs PostgreSQL')
  const worker = Bun.spawn(['bun', 'src/main.ts'], {
    cwd: new URL('../', import.meta.url).pathname,
    env: {
      ...process.env,
      ROLE: 'worker',
      SECRET_KEY: '11'.repeat(32),
      DATABASE_URL: db.url,
      LOG_LEVEL: 'warn',
      INGEST_DOMAIN: 'in.bench.test',
    },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  await Bun.sleep(3000)
  const before = rowsOf<{ n: number }>(
    await database.db.execute(sql`select count(*)::int as n from ingest_messages where status = 'processed'`),
  )[0]!.n
  const cpu = await cpuSince({ worker: worker.pid, intake: 'self' })
  const started = performance.now()
  // Reports arrive over several connections at once (SMTP sessions, HTTP requests): 8 in parallel.
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < emails.length) {
        const email = emails[next++]!
        const accepted = await accept({ raw: email, recipient, source: 'http' })
        if (!accepted.ok) throw new Error(`accept: ${accepted.failure.code}`)
      }
    }),
  )
  const acceptSeconds = (performance.now() - started) / 1000
  while (true) {
    const pending = rowsOf<{ n: number }>(
      await database.db.execute(sql`select count(*)::int as n from ingest_messages where status = 'pending'`),
    )[0]!.n
    if (pending === 0) break
    await Bun.sleep(50)
  }
  const seconds = (performance.now() - started) / 1000
  const spent = await cpu.stop()
  const { worker: workerCpu, intake: intakeCpu } = spent.processes
  const done = rowsOf<{ processed: number; quarantined: number }>(
    await database.db.execute(sql`select count(*) filter (where status = 'processed')::int as processed,
      count(*) filter (where status = 'quarantined')::int as quarantined from ingest_messages`),
  )[0]!
  worker.kill('SIGTERM')
  await worker.exited
  const rate = 2000 / seconds
  figures.push(
    {
      metric: '2,000 reports: intake alone',
      value: `${(2000 / acceptSeconds).toFixed(0)} /s`,
      target: 'reported',
      ok: true,
    },
    {
      metric: '2,000 reports: end to end through the queue',
      value: `${rate.toFixed(0)} /s`,
      target: '≥ 200 reports/s',
      ok: rate >= 200,
    },
    {
      // Sizing (docs/operations.md): CPU per message of each process, and how busy the machine was
      // (PostgreSQL and everything else running here included).
      metric: '2,000 reports: CPU per message (worker / intake process)',
      value:
        workerCpu === null || intakeCpu === null
          ? 'unknown (no /proc)'
          : `${((workerCpu / 2000) * 1000).toFixed(1)} / ${((intakeCpu / 2000) * 1000).toFixed(1)} ms`,
      target: 'reported',
      ok: true,
    },
    {
      metric: '2,000 reports: machine busy meanwhile',
      value:
        spent.machine === null
          ? 'unknown (no /proc)'
          : `${((spent.machine / seconds / navigator.hardwareConcurrency) * 100).toFixed(0)} % of ${navigator.hardwareConcurrency} cores`,
      target: 'reported',
      ok: true,
    },
    {
      metric: '2,000 reports: processed / quarantined',
      value: `${done.processed - before} / ${done.quarantined}`,
      target: '2000 / 0',
      ok: done.processed - before === 2000 && done.quarantined === 0,
    },
  )
}
await boss.stop({ graceful: false })

// 5. Small reports over HTTP until the overview shows them (issue #20): one ROLE=all process, then
// ROLE=api with two ROLE=worker processes (bench/ingest-small.ts).
if (only('small')) {
  if (db.url === null) throw new Error('bench:ingest needs PostgreSQL')
  const token = await createToken(
    { accounts: s.accounts, tokens: s.tokens, random: systemRandom },
    { email: 'bench@example.com', name: 'bench-small', now: now() },
  )
  if (!token.ok) throw new Error('token')
  figures.push(...(await smallReportFigures({ url: db.url, recipient, domains, token: token.value.value })))
}

// 4. Large mail (issue #16): a service process's peak RSS growth for one ~60 MB message and for
// eight at once, sent over HTTP and processed by its worker (bench/ingest-memory.ts).
if (only('memory')) {
  if (db.url === null) throw new Error('bench:ingest needs PostgreSQL')
  figures.push(...(await ingestMemoryFigures({ url: db.url, database, recipient, domains })))
}

// 3. Overview and domain summary for an account holding a year of reports: rollups, daily totals
// and report rows for 20 domains over 366 days (written directly, as the writer would have), ~10 M
// records in any 90 days and ~41 M in the year. Measured over 30, 90 and 366 days (from/to reach
// a year, issue #17). BENCH_DAYS=90 builds only the last 90 days (the earlier sessions' data set).
if (only('summary')) {
  const accountId = account.accountId
  const span = Number(process.env.BENCH_DAYS ?? 366)
  await database.db.execute(
    sql`truncate daily_rollups, daily_domain_totals, weekly_failing_sources, aggregate_reports, monthly_failing_sources,
      monthly_reporter_counts, monthly_rollup_builds cascade`,
  )
  // 20 domains x `span` days; per domain-day ~5,560 records: 60 legitimate IPs carrying most mail
  // and ~500 failing IPs (spoofers, forwarders) with 1-10 messages each.
  await database.db.execute(sql`insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, reports)
    select ${accountId}, d.id, day::date, ('10.' || (d.id % 200) || '.' || (ip / 250) || '.' || (ip % 250))::inet,
      case when ip < 60 then 'none' else 'reject' end, ip < 60, ip < 40, case when ip < 60 then 900 + ip else 1 + ip % 10 end, 10
    from domains d, generate_series(current_date - ${span - 1}::int, current_date, interval '1 day') day, generate_series(0, 559) ip
    where d.account_id = ${accountId}`)
  await database.db.execute(sql`insert into daily_domain_totals (account_id, domain_id, day, messages, dmarc_pass, dkim_aligned, spf_aligned,
      disposition_none, disposition_quarantine, disposition_reject, disposition_other, reports)
    select account_id, domain_id, day, sum(messages), sum(messages) filter (where dkim_aligned or spf_aligned),
      sum(messages) filter (where dkim_aligned), sum(messages) filter (where spf_aligned),
      sum(messages) filter (where disposition = 'none'), 0, sum(messages) filter (where disposition = 'reject'), 0, 50
    from daily_rollups where account_id = ${accountId} group by account_id, domain_id, day`)
  await database.db.execute(sql`insert into weekly_failing_sources (account_id, domain_id, week, source_ip, failing)
    select account_id, domain_id, date_trunc('week', day)::date, source_ip, sum(messages)
    from daily_rollups where account_id = ${accountId} and not dkim_aligned and not spf_aligned
    group by account_id, domain_id, date_trunc('week', day)::date, source_ip`)
  // The report rows the summaries' reporters and totals.reports read: 50 a domain-day (the
  // rollups' `reports`), from 20 reporters, each one day long.
  await database.db.execute(sql`insert into aggregate_reports (account_id, domain_id, reporter_org, reporter_email,
      report_id, policy_domain, begin_at, end_at, content_hash, variant, policy, errors, record_count, message_count,
      received_at)
    select ${accountId}, d.id, 'receiver' || (r % 20) || '.example', 'dmarc@receiver' || (r % 20) || '.example',
      d.id || '-' || to_char(day, 'YYYYMMDD') || '-' || r, d.name, day, day + interval '86399 seconds',
      md5(d.id || '-' || day || '-' || r), 'rfc7489',
      jsonb_build_object('domain', d.name, 'p', 'reject', 'adkim', 'r', 'aspf', 'r'), '[]'::jsonb, 111, 2000,
      day + interval '1 day 3 hours'
    from domains d, generate_series(current_date - ${span - 1}::int, current_date, interval '1 day') day,
      generate_series(0, 49) r
    where d.account_id = ${accountId}`)
  // The nightly maintenance build of the closed months' rollups, as a running install has them
  // (BENCH_MONTHLY=0 leaves them out: the summaries then read weeks and days only).
  const build =
    process.env.BENCH_MONTHLY === '0' ? null : await timed(() => housekeeping(database).buildMonthlyRollups())
  await database.db.execute(sql`vacuum analyze monthly_failing_sources`)
  await database.db.execute(sql`vacuum analyze monthly_reporter_counts`)
  await database.db.execute(sql`vacuum analyze weekly_failing_sources`)
  // Steady state: autovacuum has visited the tables, so index-only scans need no heap visits.
  await database.db.execute(sql`vacuum analyze daily_rollups`)
  await database.db.execute(sql`vacuum analyze aggregate_reports`)
  await database.db.execute(sql`analyze daily_domain_totals`)
  const records = rowsOf<{ n: number }>(
    await database.db.execute(sql`select (count(*) * 10)::bigint as n from daily_rollups`),
  )[0]!.n
  // Over HTTP, from outside the service, as a user sees it: a ROLE=api process on this database.
  if (db.url === null) throw new Error('bench:ingest needs PostgreSQL')
  const api = await startService({
    DATABASE_URL: db.url,
    ROLE: 'api',
    SECRET_KEY: '11'.repeat(32),
    INGEST_DOMAIN: 'in.bench.test',
    RATE_LIMIT_API_PER_MINUTE: '10000000',
    LOG_LEVEL: 'info',
  })
  const token = await createToken(
    { accounts: s.accounts, tokens: s.tokens, random: systemRandom },
    { email: 'bench@example.com', name: 'bench', now: now() },
  )
  if (!token.ok) throw new Error('token')
  const bearer = token.value.value
  const get = (path: string) => fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${bearer}` } })
  const time = async (path: string) => {
    const request = () => get(path)
    const warm = await request()
    if (warm.status !== 200) throw new Error(`${path}: ${warm.status} ${await warm.text()}`)
    const times: number[] = []
    for (let i = 0; i < 20; i++) {
      const started = performance.now()
      await (await request()).arrayBuffer()
      times.push(performance.now() - started)
    }
    times.sort((a, b) => a - b)
    return { median: times[10]!, p95: times[18]! }
  }
  const today = new Date().toISOString().slice(0, 10)
  const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10)
  const year = `from=${yearAgo}&to=${today}`
  const measured: [string, string][] = [
    ['overview, 30 days', '/api/v1/dmarc-reports/overview?days=30'],
    ['overview, 90 days', '/api/v1/dmarc-reports/overview?days=90'],
    ['overview, 366 days (from/to)', `/api/v1/dmarc-reports/overview?${year}`],
    ['domain summary, 30 days', `/api/v1/dmarc-reports/domains/${domains[3]}/summary?days=30`],
    ['domain summary, 90 days', `/api/v1/dmarc-reports/domains/${domains[3]}/summary?days=90`],
    ['domain summary, 366 days (from/to)', `/api/v1/dmarc-reports/domains/${domains[3]}/summary?${year}`],
  ]
  figures.push({
    metric: `records represented by the rollups (${span} days)`,
    value: `${(Number(records) / 1e6).toFixed(1)} M`,
    target: '10 M',
    ok: Number(records) >= 10e6,
  })
  if (build !== null)
    figures.push({
      metric: `monthly rollups build (${build.value.months} months)`,
      value: `${(build.ms / 1000).toFixed(1)} s`,
      target: 'reported',
      ok: true,
    })
  for (const [metric, path] of measured) {
    const took = await time(path)
    figures.push({
      metric: `${metric} (median / p95)`,
      value: `${took.median.toFixed(0)} / ${took.p95.toFixed(0)} ms`,
      target: '≤ 150 ms',
      ok: took.p95 <= 150,
    })
  }
  // The same requests with and without the monthly rollups, alternated request by request, so that
  // both see the same load (the shared machine's load moves more than the difference between runs).
  // Without: every build marked stale, as a late report marks one, so the summaries read weeks and
  // days only, as before the monthly rollups.
  if (build !== null && span > 90) {
    const useMonthly = (on: boolean) =>
      database.db.execute(
        sql`update monthly_rollup_builds set stale = ${!on} where account_id = ${accountId}`,
      )
    for (const [metric, path] of [measured[2]!, measured[1]!, measured[5]!]) {
      const times = { with: [] as number[], without: [] as number[] }
      for (let i = 0; i < 40; i++) {
        const on = i % 2 === 0
        await useMonthly(on)
        const started = performance.now()
        const response = await get(path)
        await response.arrayBuffer()
        ;(on ? times.with : times.without).push(performance.now() - started)
      }
      await useMonthly(true)
      const shown = (list: number[]) => {
        list.sort((a, b) => a - b)
        return `${list[10]!.toFixed(0)} / ${list[18]!.toFixed(0)}`
      }
      figures.push({
        metric: `${metric}, alternated: monthly / weeks and days only`,
        value: `${shown(times.with)} | ${shown(times.without)} ms`,
        target: 'reported',
        ok: true,
      })
    }
  }
  api.child.kill()
  await api.child.exited
}

await db.drop()
await report('ingest', figures)
process.exit(0)
