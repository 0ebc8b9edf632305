import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { ReportBatchStore } from '../../../domain/ingest/ports.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { PROCESS_MESSAGE } from '../../../infrastructure/queue/catalogue.ts'
import { ingestJobDeps, intake } from '../../../src/compose/ingest.ts'
import { processStores } from '../../../src/compose/stores.ts'
import { type IngestJobDeps, ingestJobs } from '../../../src/jobs/ingest.ts'
import { processBatch } from '../../../src/jobs/ingest-batch.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// The worker's batches (src/jobs/ingest-batch.ts, docs/ingestion.md "The queue"): real messages,
// accepted as intake does, processed by the batch handler on the database of the pass.

let t: TestApp
let recipient: string
let accountId: string
let deps: IngestJobDeps
let accept: ReturnType<typeof intake>['accept']

beforeAll(async () => {
  t = await startTestApp({ INGEST_DOMAIN: 'in.batch.test' }, { queue: true })
  const owner = await t.account()
  accountId = owner.accountId
  const rows = rowsOf<{ key: string }>(
    await t.db.database.db.execute(sql`select ingest_key as key from accounts where id = ${accountId}`),
  )
  recipient = `${rows[0]!.key}@in.batch.test`
  for (const name of ['batch.example', 'gone.example']) {
    await t.db.database.db.execute(sql`insert into domains (account_id, name, verification_token, verified_at)
      values (${accountId}, ${name}, 'x', now())`)
  }
  const wired = intake(t.runtime)
  accept = wired.accept
  deps = ingestJobDeps(t.runtime, {
    messages: wired.messages,
    forensicTls: processStores(t.runtime).forensicTls,
  })
}, 60_000)
afterAll(() => t.close())

const BEGIN = 1_700_000_000

function report(input: {
  id: string
  domain?: string
  ips: string[]
  org?: string
  broken?: boolean
}): string {
  const domain = input.domain ?? 'batch.example'
  const records = input.ips.map(
    (ip, i) => `<record><row><source_ip>${ip}</source_ip><count>${i + 1}</count><policy_evaluated>
<disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>${domain}</header_from></identifiers><auth_results><dkim><domain>${domain}</domain>
<selector>s1</selector><result>pass</result></dkim><spf><domain>${domain}</domain><result>fail</result></spf>
</auth_results></record>`,
  )
  const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>${input.org ?? 'Reporter'}</org_name>
<email>r@reporter.example</email><report_id>${input.id}</report_id><date_range><begin>${BEGIN}</begin>
<end>${BEGIN + 86_399}</end></date_range></report_metadata><policy_published><domain>${domain}</domain>
<adkim>r</adkim><aspf>r</aspf><p>none</p><pct>100</pct></policy_published>${records.join('')}</feedback>`
  // A record cut off in the middle: a parse problem the message is quarantined for.
  return input.broken ? xml.replace('</source_ip>', '</source>') : xml
}

async function message(xml: string): Promise<string> {
  const raw = `From: r@reporter.example\r\nTo: ${recipient}\r\nSubject: Report\r\nMIME-Version: 1.0\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n`
  const accepted = await accept({ raw: new TextEncoder().encode(raw), recipient, source: 'http' })
  if (!accepted.ok) throw new Error(`accept: ${accepted.failure.code}`)
  return accepted.value.id
}

const messages = async (ids: string[]) =>
  rowsOf<{
    id: string
    status: string
    code: string | null
    outcome: { status: string; id: number }[] | null
  }>(
    await t.db.database.db.execute(sql`select id, status, quarantine_code as code, outcome from ingest_messages
      where id in (${sql.join(
        ids.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`),
  ).sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id))

const stored = async () =>
  rowsOf<{ report_id: string; seen: number; records: number; messages: number; rollup: number }>(
    await t.db.database.db.execute(sql`select a.report_id, a.duplicates_seen as seen,
      (select count(*)::int from aggregate_records r where r.report_id = a.id) as records, a.message_count::int as messages,
      (select coalesce(sum(messages), 0)::int from daily_rollups where account_id = ${accountId}) as rollup
      from aggregate_reports a where a.account_id = ${accountId} order by a.report_id`),
  )

test('one bad message in a batch is quarantined alone; duplicates within the batch are stored once', async () => {
  const ids = [
    await message(report({ id: 'one', ips: ['192.0.2.1', '192.0.2.2'] })),
    await message(report({ id: 'bad', ips: ['192.0.2.3'], broken: true })),
    // The same content again, then the same identity with other content, in the same batch.
    await message(report({ id: 'one', ips: ['192.0.2.1', '192.0.2.2'] })),
    await message(report({ id: 'one', ips: ['192.0.2.9'] })),
    await message(report({ id: 'two', ips: ['192.0.2.1'] })),
  ]
  await processBatch(deps, ids)
  const after = await messages(ids)
  expect(after.map((m) => m.status)).toEqual([
    'processed',
    'quarantined',
    'processed',
    'processed',
    'processed',
  ])
  expect(after[1]!.code).not.toBeNull()
  const first = after[0]!.outcome![0]!
  expect(first.status).toBe('stored')
  expect(first.id).toBeGreaterThan(0)
  expect(after[2]!.outcome![0]).toMatchObject({ status: 'duplicate', id: first.id })
  expect(after[3]!.outcome![0]).toMatchObject({ status: 'duplicate', id: first.id })
  expect(after[4]!.outcome![0]).toMatchObject({ status: 'stored' })
  // 1 + 2 messages in `one`, 1 in `two`; the duplicates add nothing but their count.
  expect(await stored()).toEqual([
    { report_id: 'one', seen: 2, records: 2, messages: 3, rollup: 4 },
    { report_id: 'two', seen: 0, records: 1, messages: 1, rollup: 4 },
  ])
  // Run again (a retry after the commit): every message is handled already, nothing changes.
  await processBatch(deps, ids)
  expect((await stored()).map((r) => r.seen)).toEqual([2, 0])
})

test('a batch whose transaction fails stores nothing; its retry stores every report once', async () => {
  const ids = [
    await message(report({ id: 'three', ips: ['198.51.100.1'] })),
    await message(report({ id: 'four', ips: ['198.51.100.2', '198.51.100.3'] })),
  ]
  const before = await stored()
  // The connection lost at the commit: every message stays pending and the job is retried.
  const lost: ReportBatchStore = {
    commit: async () => {
      throw new Error('connection lost')
    },
  }
  await expect(processBatch({ ...deps, batches: lost }, ids)).rejects.toThrow('connection lost')
  expect((await messages(ids)).map((m) => m.status)).toEqual(['pending', 'pending'])
  expect(await stored()).toEqual(before)
  await processBatch(deps, ids)
  await processBatch(deps, ids)
  const after = await stored()
  expect(after.filter((r) => r.report_id === 'three' || r.report_id === 'four')).toEqual([
    { report_id: 'four', seen: 0, records: 2, messages: 3, rollup: 8 },
    { report_id: 'three', seen: 0, records: 1, messages: 1, rollup: 8 },
  ])
})

/**
 * The job's deps with gone.example's lookup answering a domain that does not exist (as if removed
 * between the lookup and the store): the batch statement fails on that report alone.
 */
function goneDomainDeps(): IngestJobDeps {
  return {
    ...deps,
    reportDomains: async (account, policyDomain) =>
      policyDomain === 'gone.example'
        ? { ok: true, domainId: 2_000_000_000, name: 'gone.example' }
        : deps.reportDomains(account, policyDomain),
  }
}

test('a transaction that fails for one message is retried one by one: its neighbours are stored', async () => {
  // The report's domain removed between the lookup and the store (here: the lookup answers a
  // domain that does not exist): the batch statement fails on that report alone.
  const gone = goneDomainDeps()
  const ids = [
    await message(report({ id: 'five', ips: ['203.0.113.1'] })),
    await message(report({ id: 'six', domain: 'gone.example', ips: ['203.0.113.2'] })),
    await message(report({ id: 'seven', ips: ['203.0.113.3'] })),
  ]
  await expect(processBatch(gone, ids)).rejects.toThrow()
  expect((await messages(ids)).map((m) => m.status)).toEqual(['processed', 'pending', 'processed'])
  // The job's retry, with the domain back: the pending one is stored, the others skipped.
  await processBatch(deps, ids)
  expect((await messages(ids)).map((m) => m.status)).toEqual(['processed', 'processed', 'processed'])
  const reports = (await stored()).filter((r) => ['five', 'six', 'seven'].includes(r.report_id))
  expect(reports.map((r) => [r.report_id, r.seen, r.records])).toEqual([
    ['five', 0, 1],
    ['seven', 0, 1],
    ['six', 0, 1],
  ])
})

test('a message past the batch load size is loaded on its own and stored with the batch', async () => {
  const ips = Array.from({ length: 400 }, (_, i) => `10.1.${Math.floor(i / 250)}.${i % 250}`)
  const xml = report({ id: 'eight', ips })
  expect(xml.length).toBeGreaterThan(64 * 1024)
  const ids = [await message(xml), await message(report({ id: 'nine', ips: ['10.2.0.1'] }))]
  await processBatch(deps, ids)
  expect((await messages(ids)).map((m) => m.status)).toEqual(['processed', 'processed'])
  const reports = (await stored()).filter((r) => r.report_id === 'eight' || r.report_id === 'nine')
  expect(reports.map((r) => [r.report_id, r.records])).toEqual([
    ['eight', 400],
    ['nine', 1],
  ])
})

test('a message that still cannot be stored on its job’s last attempt is quarantined (storage_failed), its neighbours stored', async () => {
  const gone = goneDomainDeps()
  const ids = [
    await message(report({ id: 'ten', ips: ['203.0.113.10'] })),
    await message(report({ id: 'eleven', domain: 'gone.example', ips: ['203.0.113.11'] })),
  ]
  // Not the last attempt: the batch fails, so pg-boss retries it, and the message stays pending.
  await expect(processBatch(gone, ids)).rejects.toThrow()
  expect((await messages(ids)).map((m) => m.status)).toEqual(['processed', 'pending'])
  // The last attempt: no retry comes after it, so the message goes to the quarantine with the reason.
  await processBatch(gone, ids, new Set([ids[1]!]))
  const rows = rowsOf<{ status: string; code: string; message: string }>(
    await t.db.database.db.execute(sql`select status, quarantine_code as code, quarantine_reason as message
      from ingest_messages where id = ${ids[1]!}`),
  )
  expect(rows[0]).toMatchObject({ status: 'quarantined', code: 'storage_failed' })
  expect(rows[0]!.message).toStartWith('storing failed on every attempt: ')
})

test('the queue’s handler tells the last attempt by the job’s retry count against the queue’s retry limit', async () => {
  const gone = goneDomainDeps()
  const id = await message(report({ id: 'twelve', domain: 'gone.example', ips: ['203.0.113.12'] }))
  const handler = ingestJobs(gone).find((h) => h.queue.name === PROCESS_MESSAGE.name)!
  const job = (retryCount: number) =>
    ({ id: crypto.randomUUID(), data: { messageId: id }, retryCount }) as never
  const limit = PROCESS_MESSAGE.options.retryLimit ?? 0
  await expect(handler.handler([job(limit - 1)])).rejects.toThrow()
  expect((await messages([id])).map((m) => [m.status, m.code])).toEqual([['pending', null]])
  await handler.handler([job(limit)])
  expect((await messages([id])).map((m) => [m.status, m.code])).toEqual([['quarantined', 'storage_failed']])
})
