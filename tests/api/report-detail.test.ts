import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AggregateRecord } from '../../domain/reports/aggregate-types.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../infrastructure/repositories/aggregate-report-writer.ts'
import { reportMetadata } from '../support/aggregate-metadata.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// GET /domains/{name}/reports/{id}: the published policy and the records, every field typed and
// in snake_case, whatever the stored (parser) shape is (src/routes/report-detail-models.ts).

let t: TestApp
let owner: TestAccount
let reportId: number

const record: AggregateRecord = {
  sourceIp: '192.0.2.7',
  count: 12,
  disposition: 'none',
  dkimEvaluated: 'pass',
  spfEvaluated: 'fail',
  reasons: [{ type: 'forwarded', comment: 'via list' }],
  headerFrom: 'detail.example',
  envelopeFrom: 'bounce.detail.example',
  envelopeTo: null,
  dkim: [{ domain: 'detail.example', selector: 's1', result: 'pass', humanResult: '2048-bit key' }],
  spf: [{ domain: 'bounce.detail.example', scope: 'mfrom', result: 'fail' }],
}

beforeAll(async () => {
  t = await startTestApp()
  owner = await t.account()
  const created = await t.request('POST', '/api/v1/domains', {
    token: owner.token,
    body: { domain_name: 'detail.example' },
  })
  expect(created.status).toBe(201)
  const db = t.db.database.db
  const domainId = Number(
    rowsOf<{ id: number }>(await db.execute(sql`select id from domains where name = 'detail.example'`))[0]!
      .id,
  )
  async function* records() {
    yield record
  }
  const result = await createAggregateWriter(t.db.database).write({
    accountId: owner.accountId,
    domainId,
    messageId: null,
    metadata: reportMetadata(
      { reportId: 'detail-1', begin: 1_700_000_000, domain: 'detail.example' },
      { orgName: 'Receiver', policy: { p: 'reject', pct: 50, testing: 'n', discoveryMethod: 'treewalk' } },
    ),
    records: records(),
    evaluate: () => ({ dkimAligned: true, spfAligned: false, dmarcPass: true }),
    contentHash: () => 'detail-hash',
  })
  if (result.status !== 'stored') throw new Error(`not stored: ${result.status}`)
  reportId = result.reportId
}, 60_000)
afterAll(() => t.close())

test('the policy and the records are typed, snake_case objects', async () => {
  const res = await t.request('GET', `/api/v1/domains/detail.example/reports/${reportId}`, {
    token: owner.token,
  })
  expect(res.status).toBe(200)
  expect(res.body.data.policy).toEqual({
    domain: 'detail.example',
    adkim: null,
    aspf: null,
    p: 'reject',
    sp: null,
    np: null,
    pct: 50,
    fo: null,
    testing: 'n',
    discovery_method: 'treewalk',
  })
  expect(res.body.data.records).toEqual([
    {
      source_ip: '192.0.2.7',
      count: 12,
      disposition: 'none',
      dkim_evaluated: 'pass',
      spf_evaluated: 'fail',
      reasons: [{ type: 'forwarded', comment: 'via list' }],
      header_from: 'detail.example',
      envelope_from: 'bounce.detail.example',
      envelope_to: null,
      dkim: [{ domain: 'detail.example', selector: 's1', result: 'pass', human_result: '2048-bit key' }],
      spf: [{ domain: 'bounce.detail.example', scope: 'mfrom', result: 'fail' }],
      dkim_aligned: true,
      spf_aligned: false,
      dmarc_pass: true,
    },
  ])
  expect(JSON.stringify(res.body)).not.toMatch(/"[a-z]+[A-Z]\w*":/)
})

test('OpenAPI names the policy and record models the detail references', async () => {
  const spec = (await t.request('GET', '/openapi/json')).body
  const detail = spec.components.schemas.AggregateReportDetail.properties.data.properties
  expect(detail.policy).toEqual({ $ref: '#/components/schemas/AggregateReportPolicy' })
  expect(detail.records.items).toEqual({ $ref: '#/components/schemas/AggregateRecord' })
  expect(Object.keys(spec.components.schemas.AggregateReportPolicy.properties)).toContain('discovery_method')
  expect(spec.components.schemas.AggregateRecord.properties.dkim.items.properties.human_result.type).toEqual([
    'string',
    'null',
  ])
})
