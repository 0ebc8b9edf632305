import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { ingestJobDeps, intake } from '../../../src/compose/ingest.ts'
import { processStores } from '../../../src/compose/stores.ts'
import type { IngestJobDeps } from '../../../src/jobs/ingest.ts'
import { processBatch } from '../../../src/jobs/ingest-batch.ts'
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

const BEGIN = 1_700_000_000

function report(id: string, count: number, broken = false): string {
  const records = Array.from({ length: count }, (_, i) => {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
    const from = i % 3 === 0 ? 'mail.thread.example' : i % 3 === 1 ? 'thread.example' : 'other.example'
    return `<record><row><source_ip>${ip}</source_ip><count>${(i % 7) + 1}</count><policy_evaluated>
<disposition>${i % 5 === 0 ? 'quarantine' : 'none'}</disposition><dkim>${i % 2 ? 'pass' : 'fail'}</dkim><spf>fail</spf>
<reason><type>forwarded</type><comment>c${i % 4}</comment></reason></policy_evaluated></row>
<identifiers><header_from>${from}</header_from><envelope_from>bounce.example</envelope_from></identifiers>
<auth_results><dkim><domain>${from}</domain><selector>s${i % 3}</selector><result>pass</result></dkim>
<spf><domain>bounce.example</domain><result>${i % 2 ? 'pass' : 'softfail'}</result></spf></auth_results></record>`
  })
  const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>Reporter</org_name>
<email>r@reporter.example</email><report_id>${id}</report_id><date_range><begin>${BEGIN}</begin>
<end>${BEGIN + 86_399}</end></date_range></report_metadata><policy_published><domain>thread.example</domain>
<adkim>r</adkim><aspf>s</aspf><p>none</p><pct>100</pct></policy_published>${records.join('')}</feedback>`
  // A record cut off in the middle, far into the report: quarantined, nothing stored.
  return broken ? xml.replace('<source_ip>10.0.7.208</source_ip>', '<source_ip>10.0.7.208</source>') : xml
}

async function message(xml: string): Promise<string> {
  const raw = `From: r@reporter.example\r\nTo: ${recipient}\r\nSubject: Report\r\nMIME-Version: 1.0\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n`
  const accepted = await accept({ raw: new TextEncoder().encode(raw), recipient, source: 'http' })
  if (!accepted.ok) throw new Error(`accept: ${accepted.failure.code}`)
  return accepted.value.id
}

const recordsOf = async (reportId: string) =>
  rowsOf<Record<string, unknown>>(
    await t.db.database.db.execute(sql`select r.day, r.source_ip, r.count, r.disposition, r.dkim_evaluated,
      r.spf_evaluated, r.reasons, r.header_from, r.envelope_from, r.envelope_to, r.dkim, r.spf, r.dkim_aligned,
      r.spf_aligned, r.dmarc_pass from aggregate_records r join aggregate_reports a on a.id = r.report_id
      where a.account_id = ${accountId} and a.report_id = ${reportId} order by r.id`),
  )

const statusOf = async (id: string) =>
  rowsOf<{ status: string; code: string | null }>(
    await t.db.database.db.execute(
      sql`select status, quarantine_code as code from ingest_messages where id = ${id}::uuid`,
    ),
  )[0]!

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
