import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { ingestJobDeps, intake } from '../../../src/compose/ingest.ts'
import { processStores } from '../../../src/compose/stores.ts'
import type { IngestJobDeps } from '../../../src/jobs/ingest.ts'
import { processBatch } from '../../../src/jobs/ingest-batch.ts'
import { jobReport, mailJobReport, messageStatus, storedRecords } from '../../support/job-reports.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// A large message's aggregate report parsed on its own thread (INGEST_PARSE_THREAD_BYTES,
// infrastructure/runtime/threaded-aggregate-parse.ts; docs/ingestion.md, "Sharing the thread with
// the API"): the same rows as the parse on the worker's thread, the same quarantine for bad XML.

let t: TestApp
let recipient: string
let accountId: string
let here: IngestJobDeps
let threaded: IngestJobDeps
let accept: ReturnType<typeof intake>['accept']

beforeAll(async () => {
  t = await startTestApp({ INGEST_DOMAIN: 'in.thread.test' }, { queue: true })
  const owner = await t.account()
  accountId = owner.accountId
  const rows = rowsOf<{ key: string }>(
    await t.db.database.db.execute(sql`select ingest_key as key from accounts where id = ${accountId}`),
  )
  recipient = `${rows[0]!.key}@in.thread.test`
  await t.db.database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
      values (${accountId}, 'thread.example', 'x', now())`)
  const wired = intake(t.runtime)
  accept = wired.accept
  const deps = ingestJobDeps(t.runtime, {
    messages: wired.messages,
    forensicTls: processStores(t.runtime).forensicTls,
  })
  here = { ...deps, parseThreadBytes: 0 }
  // Every message counts as large here.
  threaded = { ...deps, parseThreadBytes: 1 }
}, 60_000)
afterAll(() => t.close())

const report = (id: string, count: number, broken = false) => jobReport('thread.example', id, count, broken)
const message = (xml: string) => mailJobReport(accept, recipient, xml)
const recordsOf = (reportId: string) => storedRecords(t.db.database, accountId, reportId)
const statusOf = (id: string) => messageStatus(t.db.database, id)

test('a report parsed on its own thread stores the same records as one parsed here', async () => {
  const onThread = await message(report('on-thread', 3000))
  const onMain = await message(report('on-main', 3000))
  await processBatch(threaded, [onThread])
  await processBatch(here, [onMain])
  expect(await statusOf(onThread)).toEqual({ status: 'processed', code: null })
  expect(await statusOf(onMain)).toEqual({ status: 'processed', code: null })
  const a = await recordsOf('on-thread')
  expect(a.length).toBe(3000)
  expect(a).toEqual(await recordsOf('on-main'))
  // The same content again through the thread: a duplicate by its content hash.
  const again = await message(report('on-thread', 3000))
  await processBatch(threaded, [again])
  const seen = rowsOf<{ seen: number }>(
    await t.db.database.db.execute(sql`select duplicates_seen as seen from aggregate_reports
      where account_id = ${accountId} and report_id = 'on-thread'`),
  )
  expect(seen).toEqual([{ seen: 1 }])
}, 60_000)

test('bad XML in a threaded parse quarantines the message as the parse here does, storing nothing', async () => {
  const onThread = await message(report('bad-thread', 3000, true))
  const onMain = await message(report('bad-main', 3000, true))
  await processBatch(threaded, [onThread])
  await processBatch(here, [onMain])
  const a = await statusOf(onThread)
  expect(a.status).toBe('quarantined')
  expect(a).toEqual(await statusOf(onMain))
  expect(await recordsOf('bad-thread')).toEqual([])
}, 60_000)
