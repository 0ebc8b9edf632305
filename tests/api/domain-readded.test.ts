import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { pgDemoStore } from '../../infrastructure/repositories/pg-demo-store.ts'
import { startWorkers } from '../../src/worker.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// A domain removed and added again (as `demo --remove` then `demo` do) while the worker still
// remembers its old id (src/compose/ingest.ts keeps a domain's match for 10 s): the next report's
// store is refused by the foreign key, and the batch is read again with fresh matches at once. It
// used to wait for pg-boss's retry (30 s on), which matched the stale id again while it lived.

const AGG = 'tests/fixtures/dmarc-aggregate/parsedmarc/aggregate'
const DOMAIN = 'example.com'

let t: TestApp
let owner: TestAccount
const db = () => t.db.database.db

async function upload(body: Uint8Array) {
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/messages', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'message/rfc822' },
      body: body as BodyInit,
    }),
  )
  return (await response.json()).data.id as string
}

async function settledWithin(id: string, ms: number) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const rows = rowsOf<{ status: string }>(
      await db().execute(sql`select status from ingest_messages where id = ${id}`),
    )
    if (rows[0]?.status !== 'pending') return rows[0]?.status
    await Bun.sleep(50)
  }
  return 'pending'
}

async function addVerified() {
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: DOMAIN } })
  await db().execute(
    sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${DOMAIN}`,
  )
}

/** A report email for the domain, with a report id of its own. */
async function reportMail(id: string): Promise<Uint8Array> {
  const xml = (await Bun.file(`${AGG}/example.net!example.com!1529366400!1529452799.xml`).text()).replace(
    '<report_id>',
    `<report_id>${id}-`,
  )
  const mail = [
    'From: reporter@example.net',
    'To: reports@example.org',
    'Subject: Report Domain: example.com',
    'MIME-Version: 1.0',
    'Content-Type: text/xml',
    '',
    xml,
  ].join('\r\n')
  return new TextEncoder().encode(mail)
}

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  await addVerified()
}, 60_000)
afterAll(() => t.close())

test('a report for a domain added again is stored at once, under the new domain', async () => {
  expect(await settledWithin(await upload(await reportMail('first')), 15_000)).toBe('processed')
  // Domains are deleted only as the demo's is (`demo --remove`, infrastructure/repositories/pg-demo-store.ts).
  expect(await pgDemoStore(db()).remove(owner.accountId, DOMAIN)).toBe(true)
  await addVerified()
  // Well before pg-boss's first retry (30 s): read again with a fresh match in the same job.
  expect(await settledWithin(await upload(await reportMail('second')), 10_000)).toBe('processed')
  const stored = rowsOf<{ report_id: string; current: boolean }>(
    await db().execute(sql`select r.report_id, d.id is not null as current from aggregate_reports r
      left join domains d on d.id = r.domain_id where r.account_id = ${owner.accountId}`),
  )
  expect(stored.map((r) => [r.report_id.split('-')[0], r.current])).toEqual([['second', true]])
}, 60_000)
