// Where the event loop stalls while one 100,000-record report is stored in this process: a
// setImmediate chain records every gap between turns over 5 ms (issue #20's profile), with the
// duration of every collection asked for (Bun.gc) and the peak RSS (VmHWM) beside it.
//
//   bun bench/lag-probe.ts            RECORDS=n another size; WORKER_SLICE_MS is not read here:
//                                     the writer's default slice applies
//   GC_EDEN=1 bun bench/lag-probe.ts  every requested collection made an eden one (the memory
//                                     cost of not collecting fully: docs/ingestion.md)
import { sql } from 'drizzle-orm'
import { ingestJobDeps } from '../src/compose/ingest.ts'
import { intake } from '../src/compose.ts'
import { processMessage } from '../src/jobs/ingest.ts'
import { benchAccount, benchRuntime } from './bench-runtime.ts'
import { aggregateXml, reportEmail } from './report-generator.ts'

const { db, database, boss, runtime, s } = await benchRuntime({
  // INGEST_PARSE_THREAD_BYTES=0 bun bench/lag-probe.ts: the parse on this thread, as before.
  ...(process.env.INGEST_PARSE_THREAD_BYTES
    ? { INGEST_PARSE_THREAD_BYTES: process.env.INGEST_PARSE_THREAD_BYTES }
    : {}),
})
const account = await benchAccount(s, 'b@example.com')
await database.db.execute(
  sql`insert into domains (account_id, name, verification_token, verified_at) values (${account.accountId}, 'brand0.example', 'x', now())`,
)
const recipient = account.recipient
const { accept, messages } = intake(runtime as never)
const deps = ingestJobDeps(runtime as never, { messages, forensicTls: s.forensicTls })
const email = reportEmail({
  to: recipient,
  xml: aggregateXml({
    domain: 'brand0.example',
    reportId: 'big',
    records: Number(process.env.RECORDS ?? 100_000),
    seed: 1,
  }),
  reportId: 'big',
  domain: 'brand0.example',
})
const gcTimes: Record<string, number[]> = { true: [], false: [] }
const realGc = Bun.gc
;(Bun as { gc: (f: boolean) => void }).gc = (force: boolean) => {
  const a = performance.now()
  realGc(process.env.GC_EDEN ? false : force)
  gcTimes[String(force)]!.push(Math.round(performance.now() - a))
}
const gaps: { at: number; ms: number }[] = []
let last = performance.now()
let running = true
await Bun.write('/proc/self/clear_refs', '5')
const rssBefore = process.memoryUsage.rss()
const t0 = performance.now()
const tick = () => {
  const n = performance.now()
  if (n - last > 5) gaps.push({ at: Math.round(last - t0), ms: Math.round(n - last) })
  last = n
  if (running) setImmediate(tick)
}
setImmediate(tick)
const accepted = await accept({ raw: email, recipient, source: 'http' })
if (!accepted.ok) throw new Error('accept')
await processMessage(deps as never, accepted.value.id)
running = false
const total = performance.now() - t0
gaps.sort((a, b) => b.ms - a.ms)
console.log(
  `took ${total.toFixed(0)} ms; gaps > 5 ms: ${gaps.length}, sum ${gaps.reduce((a, g) => a + g.ms, 0)} ms`,
)
const hwm = Number(/VmHWM:\s+(\d+)/.exec(await Bun.file('/proc/self/status').text())![1]) * 1024
console.log(`rss before ${Math.round(rssBefore / 1e6)} MB, peak ${Math.round(hwm / 1e6)} MB`)
console.log('gc(true):', JSON.stringify(gcTimes.true), 'gc(false):', JSON.stringify(gcTimes.false))
console.log('longest:', JSON.stringify(gaps.slice(0, 25)))
await boss.stop({ graceful: false })
await db.drop()
process.exit(0)
