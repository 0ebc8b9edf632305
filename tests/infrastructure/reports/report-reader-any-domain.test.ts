import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { TlsRptReport } from '../../../domain/reports/tls-rpt.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { pgForensicTlsStore } from '../../../infrastructure/repositories/pg-forensic-tls-store.ts'
import { pgReportReader } from '../../../infrastructure/repositories/pg-report-reader.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { aggregateRecord, streamOf } from '../../support/aggregate-records.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// The report reader with `domainId: null` reads every domain of the account and only that
// account's; with a domain, only that domain's. tlsReport is scoped by account. Both accounts
// own a domain of the same name, so a query scoped by name or domain id alone would leak.

const DAY = 86_400
const BEGIN = Date.parse('2026-03-10T00:00:00Z') / 1000
const PERIOD = { from: '2026-03-01', to: '2026-03-31' }
const SHARED = 'shared.example'
const ALPHA = 'alpha.example'

let t: TestApp
const account = { a: '', b: '' }
const domain = { aShared: 0, aAlpha: 0, bShared: 0 }
const report = { aShared: 0, aAlpha1: 0, aAlpha2: 0, bShared: 0 }
const tls = { a: 0, b: 0 }

const db = () => t.db.database.db
const reader = () => pgReportReader(db())
const store = () => pgForensicTlsStore(db())

async function addDomain(token: string, accountId: string, name: string): Promise<number> {
  const created = await t.request('POST', '/api/v1/domains', { token, body: { domain_name: name } })
  expect(created.status).toBe(201)
  const [row] = rowsOf<{ id: string }>(
    await db().execute(sql`select id from domains where account_id = ${accountId} and name = ${name}`),
  )
  return Number(row!.id)
}

async function writeReport(accountId: string, domainId: number, name: string, org: string, begin: number) {
  const records = [
    aggregateRecord('192.0.2.1', { count: 5, dkimEvaluated: 'pass', spfEvaluated: 'pass', headerFrom: name }),
  ]
  const written = await createAggregateWriter(t.db.database).write({
    accountId,
    domainId,
    messageId: null,
    metadata: reportMetadata({ reportId: `${org}-${begin}`, begin, domain: name }, { orgName: org }),
    records: streamOf(records),
    evaluate: () => ({ dkimAligned: true, spfAligned: true, dmarcPass: true }),
    contentHash: () => `${accountId}-${org}-${begin}`,
  })
  expect(written.status).toBe('stored')
  return written.reportId
}

function tlsReport(org: string, name: string): TlsRptReport {
  return {
    organizationName: org,
    startDatetime: '2026-03-10T00:00:00Z',
    endDatetime: '2026-03-10T23:59:59Z',
    begin: BEGIN,
    end: BEGIN + DAY - 1,
    contactInfo: `tls@${org}`,
    reportId: `tls-${org}`,
    policies: [
      {
        policyType: 'sts',
        policyStrings: ['version: STSv1', 'mode: enforce'],
        policyDomain: name,
        mxHosts: [`mx.${name}`],
        totalSuccessfulSessionCount: 70,
        totalFailureSessionCount: 30,
        failureDetails: [
          {
            resultType: 'certificate-expired',
            sendingMtaIp: '203.0.113.5',
            receivingMxHostname: `mx.${name}`,
            receivingMxHelo: null,
            receivingIp: '198.51.100.25',
            failedSessionCount: 30,
            additionalInformation: null,
            failureReasonCode: null,
          },
        ],
      },
    ],
  }
}

beforeAll(async () => {
  t = await startTestApp()
  const a = await t.account()
  const b = await t.account()
  account.a = a.accountId
  account.b = b.accountId
  domain.aShared = await addDomain(a.token, a.accountId, SHARED)
  domain.aAlpha = await addDomain(a.token, a.accountId, ALPHA)
  domain.bShared = await addDomain(b.token, b.accountId, SHARED)
  report.aShared = await writeReport(account.a, domain.aShared, SHARED, 'one.example', BEGIN)
  report.aAlpha1 = await writeReport(account.a, domain.aAlpha, ALPHA, 'two.example', BEGIN + DAY)
  report.aAlpha2 = await writeReport(account.a, domain.aAlpha, ALPHA, 'three.example', BEGIN + 2 * DAY)
  report.bShared = await writeReport(account.b, domain.bShared, SHARED, 'foreign.example', BEGIN + DAY)
  const storedA = await store().insertTls({
    accountId: account.a,
    domainId: domain.aShared,
    messageId: null,
    report: tlsReport('tls-a.example', SHARED),
  })
  const storedB = await store().insertTls({
    accountId: account.b,
    domainId: domain.bShared,
    messageId: null,
    report: tlsReport('tls-b.example', SHARED),
  })
  tls.a = storedA.id
  tls.b = storedB.id
}, 60_000)

afterAll(() => t.close())

const page = (n: number, perPage = 25) => ({ page: n, perPage })
const idsOf = (items: Record<string, unknown>[]) => items.map((r) => Number(r.id))

describe('listReports', () => {
  test('null reads every domain of the account, newest first, with the domain’s name', async () => {
    const all = await reader().listReports(account.a, null, PERIOD, page(1))
    expect(all.total).toBe(3)
    expect(idsOf(all.items)).toEqual([report.aAlpha2, report.aAlpha1, report.aShared])
    expect(all.items.map((r) => r.domain)).toEqual([ALPHA, ALPHA, SHARED])
    expect(all.items.map((r) => r.reporter_org)).not.toContain('foreign.example')
    const theirs = await reader().listReports(account.b, null, PERIOD, page(1))
    expect(idsOf(theirs.items)).toEqual([report.bShared])
    expect(theirs.items[0]!.domain).toBe(SHARED)
  })

  test('pages across domains, and the period still applies', async () => {
    const first = await reader().listReports(account.a, null, PERIOD, page(1, 2))
    const second = await reader().listReports(account.a, null, PERIOD, page(2, 2))
    expect(first.total).toBe(3)
    expect(second.total).toBe(3)
    expect([...idsOf(first.items), ...idsOf(second.items)]).toEqual([
      report.aAlpha2,
      report.aAlpha1,
      report.aShared,
    ])
    const early = await reader().listReports(
      account.a,
      null,
      { from: '2026-03-10', to: '2026-03-10' },
      page(1),
    )
    expect(idsOf(early.items)).toEqual([report.aShared])
    const none = await reader().listReports(
      account.a,
      null,
      { from: '2026-01-01', to: '2026-01-31' },
      page(1),
    )
    expect(none).toEqual({ items: [], total: 0 })
  })

  test('a domain reads only that domain, and never another account’s domain', async () => {
    const alpha = await reader().listReports(account.a, domain.aAlpha, PERIOD, page(1))
    expect(idsOf(alpha.items)).toEqual([report.aAlpha2, report.aAlpha1])
    expect(alpha.total).toBe(2)
    const shared = await reader().listReports(account.a, domain.aShared, PERIOD, page(1))
    expect(idsOf(shared.items)).toEqual([report.aShared])
    // B's domain id under A's account: nothing, though the names are the same.
    expect(await reader().listReports(account.a, domain.bShared, PERIOD, page(1))).toEqual({
      items: [],
      total: 0,
    })
  })
})

describe('report', () => {
  test('null finds any report of the account, with its domain and records', async () => {
    const found = await reader().report(account.a, null, report.aAlpha1, page(1, 100))
    expect(found).not.toBeNull()
    expect(found!.report.domain).toBe(ALPHA)
    expect(found!.report.reporter_org).toBe('two.example')
    expect(found!.total).toBe(1)
    expect(found!.records).toHaveLength(1)
    expect(found!.records[0]).toMatchObject({ source_ip: '192.0.2.1', dmarc_pass: true })
  })

  test('another account’s report is null, with or without a domain', async () => {
    expect(await reader().report(account.a, null, report.bShared, page(1))).toBeNull()
    expect(await reader().report(account.a, domain.aShared, report.bShared, page(1))).toBeNull()
    expect(await reader().report(account.a, domain.bShared, report.bShared, page(1))).toBeNull()
    expect(await reader().report(account.b, null, report.aShared, page(1))).toBeNull()
    expect((await reader().report(account.b, null, report.bShared, page(1)))!.report.domain).toBe(SHARED)
  })

  test('with a domain, a report of the account’s other domain is null', async () => {
    expect(await reader().report(account.a, domain.aShared, report.aAlpha1, page(1))).toBeNull()
    expect(
      Number((await reader().report(account.a, domain.aAlpha, report.aAlpha1, page(1)))!.report.id),
    ).toBe(report.aAlpha1)
  })
})

describe('tlsReport', () => {
  test('returns the account’s report with its columns and the stored JSON', async () => {
    const found = await store().tlsReport(account.a, tls.a)
    expect(found).toEqual({
      id: tls.a,
      domain: SHARED,
      organization: 'tls-a.example',
      report_id: 'tls-tls-a.example',
      begin_at: '2026-03-10T00:00:00.000Z',
      end_at: '2026-03-10T23:59:59.000Z',
      success_count: 70,
      failure_count: 30,
      report: tlsReport('tls-a.example', SHARED),
      created_at: expect.any(String),
      // Written without a message: received when stored.
      received_at: found!.created_at,
    })
    expect(Number.isNaN(Date.parse(found!.created_at))).toBe(false)
  })

  test('another account’s or an unknown id is null', async () => {
    expect(await store().tlsReport(account.a, tls.b)).toBeNull()
    expect(await store().tlsReport(account.b, tls.a)).toBeNull()
    expect(await store().tlsReport(account.a, tls.b + 1000)).toBeNull()
    expect((await store().tlsReport(account.b, tls.b))!.organization).toBe('tls-b.example')
  })
})
