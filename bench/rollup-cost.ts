// Issue #20 part 3: what the per-source daily rollup costs written at intake, against deriving it
// from the records partition when read. One 100,000-record report is stored as the worker stores it,
// then, on its data: the read of the day's sources from the rollup and from the records (grouped
// as the rollup's key), and the write of ~100,000 rollup rows as the finishing statement does it
// (into another day, rolled back). Each timed BENCH_ROUNDS times; the median is printed.
import { sql } from 'drizzle-orm'
import { rowsOf } from '../infrastructure/db/database.ts'
import { ingestJobDeps } from '../src/compose/ingest.ts'
import { intake } from '../src/compose.ts'
import { processMessage } from '../src/jobs/ingest.ts'
import { benchAccount, benchRuntime } from './bench-runtime.ts'
import { aggregateXml, reportEmail } from './report-generator.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const { db, database, boss, runtime, s } = await benchRuntime()
if (db.url === null) throw new Error('needs PostgreSQL')
const account = await benchAccount(s, 'b@example.com')
await database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
  values (${account.accountId}, 'brand0.example', 'x', now())`)
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
await database.db.execute(sql`vacuum analyze aggregate_records`)
await database.db.execute(sql`vacuum analyze daily_rollups`)
const { domain_id: domainId, day } = rowsOf<{ domain_id: number; day: string }>(
  await database.db.execute(sql`select domain_id, day::text from daily_rollups limit 1`),
)[0]!
const counts = rowsOf<{ rollups: number; records: number }>(
  await database.db.execute(sql`select (select count(*) from daily_rollups)::int as rollups,
    (select count(*) from aggregate_records)::int as records`),
)[0]!

if (database.kind !== 'postgres') throw new Error('needs PostgreSQL')
const client = database.client

async function timed(name: string, statement: string, rollback = false) {
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now()
    if (rollback)
      await client
        .begin(async (tx) => {
          await tx.unsafe(statement)
          throw new Error('rollback')
        })
        .catch(() => {})
    else await client.unsafe(statement)
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  console.log(
    `${name}: median ${times[Math.floor(ROUNDS / 2)]!.toFixed(0)} ms (min ${times[0]!.toFixed(0)}, max ${times.at(-1)!.toFixed(0)})`,
  )
}

const where = `domain_id = ${Number(domainId)} and day = '${day}'::date`
console.log(`${counts.records} records, ${counts.rollups} rollup rows for the day`)
// The top sources of the day as the sources view reads them: by the rollup, then by the records.
await timed(
  'read the day by source from daily_rollups',
  `select source_ip, sum(messages) m from daily_rollups where ${where}
    group by source_ip order by m desc limit 50`,
)
await timed(
  'read the day by source from aggregate_records (derived)',
  `select source_ip, sum(count) m from aggregate_records where ${where}
    group by source_ip order by m desc limit 50`,
)
await timed(
  'derive the rollup rows from the records (grouped by the rollup key, no evidence lists)',
  `select source_ip, disposition, dkim_aligned, spf_aligned, sum(count) from aggregate_records
    where ${where} group by 1, 2, 3, 4`,
)
await timed(
  'write ~100,000 rollup rows in key order (as the finishing statement; rolled back)',
  `insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned,
      messages, spf_pass, dkim_pass, forwarded, dkim_domains, spf_domains, reports)
    select account_id, domain_id, day + 1, source_ip, disposition, dkim_aligned, spf_aligned, messages, spf_pass,
      dkim_pass, forwarded, dkim_domains, spf_domains, reports
    from daily_rollups where ${where}
    order by source_ip, disposition, dkim_aligned, spf_aligned
    on conflict (domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned) do update set
      messages = daily_rollups.messages + excluded.messages`,
  true,
)
await boss.stop({ graceful: false })
await db.drop()
process.exit(0)
