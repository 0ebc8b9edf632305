// Issue #20: what the report alert rules cost after a 100,000-record aggregate report is stored.
// The parent stores the report as the worker does (processMessage), then runs the evaluation of the
// domain's report rules in a fresh child process per mode, so that each peak RSS is the
// evaluation's own: `after` is evaluateReports (pages of sources, a bounded summary; docs/alerts.md
// "How the report rules read their facts"), `before` the former path (every source of the day
// loaded, classified and handed to the rules at once). Printed: RSS before and peak during, the
// evaluation's wall time, and the longest event-loop stall (what an API read would wait).
import { sql } from 'drizzle-orm'
import { evaluateReports } from '../domain/alerts/evaluation.ts'
import { reconcile } from '../domain/alerts/lifecycle.ts'
import { reportAlerts, reportScope } from '../domain/alerts/rules/reports.ts'
import { classifyStats } from '../domain/sources/list-sources.ts'
import { resolveSpfTree } from '../domain/spf/include-tree.ts'
import { openPostgres, rowsOf } from '../infrastructure/db/database.ts'
import { alertEvaluationDeps } from '../src/compose/alerts.ts'
import { resolvers } from '../src/compose/dns.ts'
import { ingestJobDeps } from '../src/compose/ingest.ts'
import { stores as storesOf } from '../src/compose/stores.ts'
import { intake } from '../src/compose.ts'
import { loadConfig } from '../src/config.ts'
import { processMessage } from '../src/jobs/ingest.ts'
import { benchAccount, benchRuntime } from './bench-runtime.ts'
import { aggregateXml, reportEmail } from './report-generator.ts'

const DAY_MS = 86_400_000

async function child(url: string, mode: string, ref: { accountId: string; domainId: number }) {
  const database = openPostgres(url, { max: 5 })
  const dns = resolvers(
    loadConfig({ LOG_LEVEL: 'silent', SECRET_KEY: '11'.repeat(32) }),
    () => new Date(),
  ).dns
  const deps = alertEvaluationDeps(storesOf(database), { now: () => new Date(), dns })
  Bun.gc(true)
  const rssBefore = process.memoryUsage.rss()
  let peak = rssBefore
  let stall = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const at = performance.now()
    stall = Math.max(stall, at - last - 5)
    last = at
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 5)
  const started = performance.now()
  if (mode === 'after') await evaluateReports(deps, ref)
  else {
    // The former evaluateReports, unchanged but for the source facts.
    const now = new Date()
    const domain = (await deps.facts.domain(ref.accountId, ref.domainId))!
    const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS
    const yesterday = new Date(today - DAY_MS).toISOString().slice(0, 10)
    const [daily, stats, overrides] = await Promise.all([
      deps.figures.daily(ref, {
        from: new Date(today - 7 * DAY_MS).toISOString().slice(0, 10),
        to: yesterday,
      }),
      deps.figures.stats(ref, { from: yesterday, to: yesterday }),
      deps.figures.overrides(ref),
    ])
    const spfTree = stats.length === 0 ? null : await resolveSpfTree({ dns }, domain.name)
    const views = classifyStats({ domain: domain.name, stats, overrides, spfTree })
    const firstSeen = await deps.facts.firstSeen(
      ref.accountId,
      ref.domainId,
      stats.map((s) => s.ip),
    )
    const sources = views.map((v) => ({ ...v, firstSeen: firstSeen.get(v.stats.ip) ?? v.stats.firstSeen }))
    const candidates = reportAlerts({
      domain: domain.name,
      now,
      daily,
      sources,
      policy: domain.dmarcPolicy ?? 'missing',
    })
    const open = await deps.alerts.openAlerts(ref.accountId, ref.domainId)
    const scope = { ...reportScope(), domain: domain.name }
    await deps.alerts.applyPlan(ref.accountId, ref.domainId, reconcile(open, candidates, scope, now), now)
  }
  const ms = performance.now() - started
  await Bun.sleep(20)
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage.rss())
  const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`
  const alerts = rowsOf<{ type: string; subject: string; title: string; details: unknown }>(
    await database.db.execute(sql`select type, subject, title, details from alerts order by type, subject`),
  )
  // The same digest in both modes: the same alerts with the same evidence.
  const digest = Bun.hash(JSON.stringify(alerts)).toString(16)
  console.log(
    `${mode}: evaluation ${ms.toFixed(0)} ms, RSS ${mb(rssBefore)} before, peak ${mb(peak)} (+${mb(peak - rssBefore)}), longest event-loop stall ${stall.toFixed(0)} ms; alerts: ${alerts.map((a) => a.type).join(', ')} (digest ${digest})`,
  )
  await database.close()
}

if (process.env.BENCH_ALERT_CHILD !== undefined) {
  const [url, mode, accountId, domainId] = process.env.BENCH_ALERT_CHILD.split(' ')
  await child(url!, mode!, { accountId: accountId!, domainId: Number(domainId) })
  process.exit(0)
}

const { db, database, boss, runtime, s } = await benchRuntime()
if (db.url === null) throw new Error('needs PostgreSQL')
const account = await benchAccount(s, 'b@example.com')
const [domain] = rowsOf<{ id: number }>(
  await database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
    values (${account.accountId}, 'brand0.example', 'x', now()) returning id`),
)
const recipient = account.recipient
const { accept, messages } = intake(runtime)
const deps = ingestJobDeps(runtime, { messages, forensicTls: s.forensicTls })
const xml = aggregateXml({ domain: 'brand0.example', reportId: 'big', records: 100_000, seed: 1 })
const accepted = await accept({
  raw: reportEmail({ to: recipient, xml, reportId: 'big', domain: 'brand0.example' }),
  recipient,
  source: 'http',
})
if (!accepted.ok) throw new Error('accept')
await processMessage(deps, accepted.value.id)
await database.db.execute(sql`vacuum analyze daily_rollups`)
const [counts] = rowsOf<{ rollups: number; sources: number }>(
  await database.db.execute(sql`select count(*)::int as rollups, count(distinct source_ip)::int as sources
    from daily_rollups`),
)
console.log(`stored: ${counts!.rollups} rollup rows, ${counts!.sources} sources for the day`)
for (const mode of (process.env.BENCH_MODES ?? 'before,after').split(',')) {
  await database.db.execute(sql`truncate alerts cascade`)
  const run = Bun.spawn(['bun', import.meta.path], {
    env: { ...process.env, BENCH_ALERT_CHILD: `${db.url} ${mode} ${account.accountId} ${domain!.id}` },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  await run.exited
}
await boss.stop({ graceful: false })
await db.drop()
process.exit(0)
