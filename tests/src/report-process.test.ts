import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { concurrencyLimit } from '../../domain/shared/concurrency-limit.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { EVALUATE_REPORT_ALERTS } from '../../infrastructure/queue/catalogue.ts'
import { reportProcesses } from '../../infrastructure/runtime/report-process.ts'
import { alertEvaluationDeps } from '../../src/compose/alerts.ts'
import { ingestJobDeps, intake } from '../../src/compose/ingest.ts'
import {
  reportProcessBytes,
  reportProcessSettings,
  reportRulesProcess,
} from '../../src/compose/report-processes.ts'
import { processStores } from '../../src/compose/stores.ts'
import { loadConfig } from '../../src/config.ts'
import { alertJobs } from '../../src/jobs/alerts.ts'
import { type IngestJobDeps, processMessage } from '../../src/jobs/ingest.ts'
import { processBatch } from '../../src/jobs/ingest-batch.ts'
import { jobReport, mailJobReport, messageStatus, storedRecords } from '../support/job-reports.ts'
import { startService } from '../support/processes.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { backend } from '../support/test-db.ts'

// Large messages digested by a report process of their own (INGEST_PROCESS_BYTES, ROLE=all on
// PostgreSQL; src/report-process.ts, infrastructure/runtime/report-process.ts; docs/ingestion.md,
// "Large messages in a process of their own"): the same rows and the same quarantine as the job in
// this process, through both of the job's paths (a batch, a message processed inline), and a
// failed process leaves its message pending for the retry. A report process opens the database by
// its URL, which PGlite (in this process) has not: on that pass only the rule that none is used.

const onPostgres = test.if(backend === 'postgres')
let t: TestApp
let recipient: string
let accountId: string
let here: IngestJobDeps
let own: IngestJobDeps
let accept: ReturnType<typeof intake>['accept']
const childLogs: Record<string, unknown>[] = []

beforeAll(async () => {
  t = await startTestApp({ INGEST_DOMAIN: 'in.process.test' }, { queue: true })
  const owner = await t.account()
  accountId = owner.accountId
  const rows = rowsOf<{ key: string }>(
    await t.db.database.db.execute(sql`select ingest_key as key from accounts where id = ${accountId}`),
  )
  recipient = `${rows[0]!.key}@in.process.test`
  await t.db.database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
      values (${accountId}, 'process.example', 'x', now())`)
  const wired = intake(t.runtime)
  accept = wired.accept
  const stores = { messages: wired.messages, forensicTls: processStores(t.runtime).forensicTls }
  here = ingestJobDeps(t.runtime, stores)
  // Every message of 20 kB or more counts as large here.
  const logger = {
    ...t.runtime.logger,
    info(msg: string, fields?: Record<string, unknown>) {
      if (msg === 'message digested by a report process') childLogs.push(fields ?? {})
    },
  }
  own = ingestJobDeps({ ...t.runtime, logger, reportProcessBytes: 20_000 }, stores)
}, 60_000)
afterAll(() => t.close())

const report = (id: string, count: number, broken = false) => jobReport('process.example', id, count, broken)
const message = (xml: string) => mailJobReport(accept, recipient, xml)
const recordsOf = (reportId: string) => storedRecords(t.db.database, accountId, reportId)
const statusOf = (id: string) => messageStatus(t.db.database, id)

test('the service digests large messages in report processes only with the API beside it on PostgreSQL', () => {
  const config = (env: Record<string, string>) => loadConfig({ INGEST_PROCESS_BYTES: '2048', ...env })
  const postgresDb = { kind: 'postgres', url: 'postgres://x@127.0.0.1/x' } as never
  const socketDb = { kind: 'postgres', url: 'postgres://x@127.0.0.1/x', socketPath: '/tmp/s' } as never
  const pgliteDb = { kind: 'pglite' } as never
  expect(reportProcessBytes(config({}), postgresDb)).toBe(2048)
  expect(loadConfig({}).ingestProcessBytes).toBe(1024 * 1024)
  expect(reportProcessBytes(config({ INGEST_PROCESS_BYTES: '0' }), postgresDb)).toBeNull()
  const onPostgres = { DATABASE_URL: 'postgres://x@127.0.0.1/x' }
  expect(reportProcessBytes(config({ ...onPostgres, ROLE: 'worker' }), postgresDb)).toBeNull()
  expect(reportProcessBytes(config({ ...onPostgres, ROLE: 'api' }), postgresDb)).toBeNull()
  // The embedded database has one holder; the CLI reaches a running service's through its socket.
  expect(reportProcessBytes(config({}), pgliteDb)).toBeNull()
  expect(reportProcessBytes(config({}), socketDb)).toBeNull()
  // Without the setting from the service (src/main.ts), the job digests everything here.
  expect(here.ownProcess).toBeUndefined()
  if (backend === 'postgres') expect(own.ownProcess?.minBytes).toBe(20_000)
  else expect(own.ownProcess).toBeUndefined()
})

onPostgres(
  'a report process stores the same records as the job here, and its parent counts it',
  async () => {
    const inChild = await message(report('in-child', 2000))
    const inHere = await message(report('in-here', 2000))
    const before = childLogs.length
    await processBatch(own, [inChild])
    await processBatch(here, [inHere])
    expect(await statusOf(inChild)).toEqual({ status: 'processed', code: null })
    expect(await statusOf(inHere)).toEqual({ status: 'processed', code: null })
    const a = await recordsOf('in-child')
    expect(a.length).toBe(2000)
    expect(a).toEqual(await recordsOf('in-here'))
    // The parent logged the child's run with the kernel's figures for it.
    expect(childLogs.length).toBe(before + 1)
    const logged = childLogs.at(-1)!
    expect(logged).toMatchObject({ message_id: inChild, status: 'processed' })
    // Its own high-water mark (VmHWM), above what it held when the task began.
    expect(Number(logged.peak_rss_bytes)).toBeGreaterThan(Number(logged.rss_at_task_bytes))
    expect(Number(logged.rss_at_task_bytes)).toBeGreaterThan(20e6)
    expect(Number(logged.cpu_ms)).toBeGreaterThan(0)
    // The per-source rollup was merged by the child after its commit, as the job here does.
    const pending = rowsOf<{ n: number }>(
      await t.db.database.db.execute(sql`select count(*)::int as n from rollup_pending`),
    )
    expect(pending).toEqual([{ n: 0 }])
  },
  60_000,
)

onPostgres(
  'a batch with small and large messages: the small ones stored here, the large one by its process',
  async () => {
    const small = [await message(report('small-1', 3)), await message(report('small-2', 5))]
    const large = await message(report('large-in-batch', 1500))
    const before = childLogs.length
    await processBatch(own, [small[0]!, large, small[1]!])
    for (const id of [...small, large])
      expect(await statusOf(id)).toEqual({ status: 'processed', code: null })
    expect((await recordsOf('small-1')).length).toBe(3)
    expect((await recordsOf('small-2')).length).toBe(5)
    expect((await recordsOf('large-in-batch')).length).toBe(1500)
    expect(childLogs.slice(before).map((l) => l.message_id)).toEqual([large])
    // Processed already: the job's retry finds nothing to do and starts no process.
    await processBatch(own, [large])
    expect(childLogs.length).toBe(before + 1)
  },
  60_000,
)

onPostgres(
  'bad XML in a report process quarantines the message as the job here does, storing nothing',
  async () => {
    const inChild = await message(report('bad-child', 2000, true))
    const inHere = await message(report('bad-here', 2000, true))
    await processBatch(own, [inChild])
    await processBatch(here, [inHere])
    const a = await statusOf(inChild)
    expect(a.status).toBe('quarantined')
    expect(a).toEqual(await statusOf(inHere))
    expect(await recordsOf('bad-child')).toEqual([])
  },
  60_000,
)

onPostgres(
  'a message processed inline (POST /ingest/reports, cli import) answers with its process result',
  async () => {
    const id = await message(report('inline-child', 1200))
    const result = await processMessage(own, id)
    expect(result.status).toBe('processed')
    if (result.status !== 'processed') return
    expect(result.outcomes).toEqual([
      expect.objectContaining({ status: 'stored', kind: 'aggregate', detail: expect.anything() }),
    ])
    expect((await recordsOf('inline-child')).length).toBe(1200)
    expect(await processMessage(own, id)).toEqual({ status: 'skipped' })
  },
  60_000,
)

onPostgres(
  'a report process that fails leaves the message pending for the job to retry',
  async () => {
    const id = await message(report('child-fails', 1200))
    if (t.db.database.kind !== 'postgres') return
    // Its database refuses it: the process answers with the error, the job throws it.
    const url = new URL(t.db.database.url)
    url.pathname = '/dw_no_such_database'
    const failing: IngestJobDeps = {
      ...own,
      ownProcess: {
        minBytes: 1,
        run: (messageId) =>
          reportProcesses({
            entry: new URL('../../src/report-process.ts', import.meta.url).pathname,
            settings: reportProcessSettings(t.config, url.toString()),
            gate: concurrencyLimit(1),
          }).run(`message ${messageId}`, { kind: 'message', messageId }, 30_000),
      },
    }
    await expect(processBatch(failing, [id])).rejects.toThrow(/dw_no_such_database/)
    expect(await statusOf(id)).toEqual({ status: 'pending', code: null })
    expect(await recordsOf('child-fails')).toEqual([])
    // The retry, with its process able to reach the database, stores it.
    await processBatch(own, [id])
    expect(await statusOf(id)).toEqual({ status: 'processed', code: null })
    expect((await recordsOf('child-fails')).length).toBe(1200)
  },
  60_000,
)

onPostgres(
  'the service (ROLE=all on PostgreSQL) hands a large message of its intake to a report process',
  async () => {
    const secret = 'report-process-intake-secret-0123456789'
    const service = await startService({
      DATABASE_URL: t.db.url!,
      SECRET_KEY: '42'.repeat(32),
      INGEST_DOMAIN: 'in.process.test',
      INGEST_SECRET: secret,
      INGEST_PROCESS_BYTES: '20000',
      LOG_LEVEL: 'info',
    })
    try {
      const raw = `From: r@reporter.example\r\nTo: ${recipient}\r\nSubject: Report\r\nMIME-Version: 1.0\r\nContent-Type: text/xml\r\n\r\n${report('via-service', 800)}\r\n`
      const response = await fetch(`${service.url}/api/v1/ingest/messages?recipient=${recipient}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'message/rfc822' },
        body: raw,
      })
      expect(response.status).toBe(202)
      const id = ((await response.json()) as { data: { id: string } }).data.id
      const line = await service.waitFor((l) => l.msg === 'message digested by a report process', 30_000)
      // Its process was started while the message arrived (Content-Length over INGEST_PROCESS_BYTES).
      expect(line).toMatchObject({ message_id: id, status: 'processed', started_ahead: true })
      expect(await statusOf(id)).toEqual({ status: 'processed', code: null })
      expect((await recordsOf('via-service')).length).toBe(800)
    } finally {
      service.child.kill('SIGTERM')
      expect(await service.child.exited).toBe(0)
    }
  },
  90_000,
)

onPostgres(
  'a day of many sources has its report rules evaluated by a report process, with the same alerts',
  async () => {
    // Two domains with the same day of reports (yesterday, UTC): one evaluated here, one by a
    // report process. From one source up, for the test (the service's threshold is 5,000).
    const day = Math.floor(Date.now() / 86_400_000) * 86_400 - 86_400
    const ids: number[] = []
    for (const name of ['rules-here.example', 'rules-child.example']) {
      const rows = rowsOf<{ id: number }>(
        await t.db.database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
          values (${accountId}, ${name}, 'x', now()) returning id`),
      )
      ids.push(Number(rows[0]!.id))
      // Every message fails DMARC, from 300 sources that are no one's: the failure-rate and
      // unknown-source rules have something to say.
      const records = Array.from(
        { length: 300 },
        (_, i) => `<record><row><source_ip>198.51.${i >> 8}.${i & 255}</source_ip><count>10</count>
<policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>${name}</header_from></identifiers><auth_results><spf><domain>spoof.example</domain>
<result>fail</result></spf></auth_results></record>`,
      )
      const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>Reporter</org_name>
<email>r@reporter.example</email><report_id>rules-${name}</report_id><date_range><begin>${day}</begin>
<end>${day + 86_399}</end></date_range></report_metadata><policy_published><domain>${name}</domain>
<p>none</p></policy_published>${records.join('')}</feedback>`
      await processBatch(here, [await message(xml)])
    }
    const logs: Record<string, unknown>[] = []
    const logger = { ...t.runtime.logger, info: (msg: string, f?: object) => logs.push({ msg, ...f }) }
    const evaluation = { ...alertEvaluationDeps(processStores(t.runtime), t.runtime), logger }
    const rules = reportRulesProcess({ config: t.config, database: t.db.database, reportProcessBytes: 1 })
    expect(rules?.minSources).toBe(5000)
    const handler = (deps: Parameters<typeof alertJobs>[1]) =>
      alertJobs(t.runtime.boss!, deps).find((h) => h.queue.name === EVALUATE_REPORT_ALERTS.name)!.handler
    await handler(evaluation)([{ data: { accountId, domainId: ids[0]! } } as never])
    await handler({ ...evaluation, ownProcess: { ...rules!, minSources: 1 } })([
      { data: { accountId, domainId: ids[1]! } } as never,
    ])
    const alertsOf = async (domainId: number) =>
      rowsOf<{ type: string; severity: string; status: string }>(
        await t.db.database.db.execute(sql`select type, severity, status from alerts
          where domain_id = ${domainId} order by type, subject`),
      )
    const here_ = await alertsOf(ids[0]!)
    expect(here_.length).toBeGreaterThan(0)
    expect(await alertsOf(ids[1]!)).toEqual(here_)
    // Only the second went to a process, and its parent logged it with the applied plan's changes.
    const byProcess = logs.filter((l) => l.msg === 'report rules evaluated by a report process')
    expect(byProcess).toEqual([expect.objectContaining({ domainId: ids[1], sources: 300 })])
    const evaluated = logs.filter((l) => l.msg === 'alerts evaluated')
    expect(evaluated.map((l) => [l.domainId, l.created])).toEqual([
      [ids[0], here_.length],
      [ids[1], here_.length],
    ])
  },
  60_000,
)

test('a report process started ahead of a task that never comes exits by itself, connected or not', async () => {
  for (const databaseUrl of [backend === 'postgres' ? t.db.url! : null, null]) {
    const child = Bun.spawn(
      [process.execPath, new URL('../../src/report-process.ts', import.meta.url).pathname],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        serialization: 'json',
        ipc() {},
      },
    )
    child.send({ settings: { ...reportProcessSettings(t.config, ''), databaseUrl, idleMs: 300 } })
    const started = performance.now()
    expect(await child.exited).toBe(0)
    expect(performance.now() - started).toBeLessThan(10_000)
  }
}, 30_000)
