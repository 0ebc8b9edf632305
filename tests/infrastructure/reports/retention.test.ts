import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { applyRetention } from '../../../infrastructure/repositories/pg-retention.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
}, 60_000)
afterAll(() => t.close())

const count = async (query: ReturnType<typeof sql>) =>
  Number(rowsOf<{ n: number }>(await t.db.database.db.execute(query))[0]!.n)

test('old records, raw bytes and failure reports go; recent ones and the rollups stay', async () => {
  const { accountId, token } = await t.account()
  await t.request('POST', '/api/v1/domains', { token, body: { domain_name: 'keep.example' } })
  const domainId = await count(sql`select id as n from domains where name = 'keep.example'`)
  await t.db.database.db.execute(
    sql`insert into account_settings (account_id, record_retention_days) values (${accountId}, 30)`,
  )
  // Another account keeps records the default 400 days, so no month is dropped whole here (that is
  // tests/infrastructure/db/partitions.test.ts): the old record goes in a batch delete.
  await t.account()
  const day = 86_400
  const today = Math.floor(Date.now() / 1000 / day) * day
  const writer = createAggregateWriter(t.db.database)
  for (const [id, begin] of [
    ['old', today - 60 * day],
    ['new', today - 2 * day],
  ] as const) {
    async function* records() {
      yield {
        sourceIp: '192.0.2.1',
        count: 3,
        disposition: 'none',
        dkimEvaluated: 'pass',
        spfEvaluated: 'pass',
        reasons: [],
        headerFrom: 'keep.example',
        envelopeFrom: null,
        envelopeTo: null,
        dkim: [],
        spf: [],
      }
    }
    await writer.write({
      accountId,
      domainId,
      messageId: null,
      metadata: reportMetadata({ reportId: id, begin, domain: 'keep.example' }),
      records: records(),
      evaluate: () => ({ dkimAligned: true, spfAligned: true, dmarcPass: true }),
      contentHash: () => id,
    })
  }
  await t.db.database.db.execute(sql`insert into ingest_messages (account_id, source, raw, size, sha256, received_at, status)
    values (${accountId}, 'http', '\\x00'::bytea, 1, 'a', now() - interval '40 days', 'processed'),
           (${accountId}, 'http', '\\x00'::bytea, 1, 'b', now() - interval '40 days', 'quarantined'),
           (${accountId}, 'http', '\\x00'::bytea, 1, 'c', now() - interval '1 day', 'processed')`)
  // A large message is kept in pieces (docs/ingestion.md, "Memory"): they go the same way.
  await t.db.database.db.execute(sql`with m as (insert into ingest_messages (account_id, source, raw, pieces, size, sha256, received_at, status)
    values (${accountId}, 'http', null, 2, 2, 'd', now() - interval '40 days', 'processed') returning id, account_id)
    insert into ingest_message_pieces (account_id, message_id, seq, bytes)
      select account_id, id, s, '\\x00'::bytea from m, generate_series(0, 1) s`)
  const result = await applyRetention(t.db.database.db)
  expect(result).toEqual({ raw: 2, records: 1, forensic: 0, partitionsDropped: [] })
  expect(await count(sql`select count(*)::int as n from aggregate_records`)).toBe(1)
  expect(
    await count(sql`select count(*)::int as n from ingest_messages where raw is null and pieces = 0`),
  ).toBe(2)
  expect(await count(sql`select count(*)::int as n from ingest_message_pieces`)).toBe(0)
  // Summaries keep the history.
  expect(await count(sql`select sum(messages)::int as n from daily_rollups`)).toBe(6)
})
