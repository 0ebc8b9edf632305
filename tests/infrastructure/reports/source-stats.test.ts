import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AggregateRecord, AuthDkim, AuthSpf } from '../../../domain/reports/aggregate-types.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import {
  dailyVolumes,
  listOverrides,
  setOverride,
  sourceStats,
} from '../../../infrastructure/repositories/pg-source-stats.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// Per-IP figures summed from the daily rollups (weighted by count), the owner's overrides and the
// daily totals, on PostgreSQL and PGlite; another account's rows for the same domain name and the
// account's other domain must never show up.

let t: TestApp
let owner: { accountId: string; domainId: number; otherDomainId: number }
let stranger: { accountId: string; domainId: number }
const db = () => t.db.database.db
const DAY1 = '2026-10-05'
const DAY2 = '2026-10-06'

const pass = (domain: string): AuthDkim => ({ domain, selector: 's1', result: 'pass', humanResult: null })
const spf = (domain: string, result: string): AuthSpf => ({ domain, scope: 'mfrom', result })

function record(sourceIp: string, count: number, fields: Partial<AggregateRecord> = {}): AggregateRecord {
  return {
    sourceIp,
    count,
    disposition: 'none',
    dkimEvaluated: null,
    spfEvaluated: null,
    reasons: [],
    headerFrom: 'src.example',
    envelopeFrom: null,
    envelopeTo: null,
    dkim: [],
    spf: [],
    ...fields,
  }
}

async function store(
  accountId: string,
  domainId: number,
  id: string,
  day: string,
  records: AggregateRecord[],
) {
  async function* stream() {
    yield* records
  }
  const aligned = (domain: string) => domain === 'src.example'
  await createAggregateWriter(t.db.database).write({
    accountId,
    domainId,
    messageId: null,
    metadata: reportMetadata({
      reportId: id,
      begin: Date.parse(`${day}T00:00:00Z`) / 1000,
      domain: 'src.example',
    }),
    records: stream(),
    evaluate: (r) => {
      const dkimAligned = r.dkim.some((d) => d.result === 'pass' && aligned(d.domain))
      const spfAligned = r.spf.some((s) => s.result === 'pass' && aligned(s.domain))
      return { dkimAligned, spfAligned, dmarcPass: dkimAligned || spfAligned }
    },
    contentHash: () => `${accountId}-${id}`,
  })
}

async function addDomain(account: { accountId: string; token: string }, name: string): Promise<number> {
  const res = await t.request('POST', '/api/v1/domains', {
    token: account.token,
    body: { domain_name: name },
  })
  expect(res.status).toBe(201)
  const rows = rowsOf<{ id: string }>(
    await db().execute(
      sql`select id from domains where account_id = ${account.accountId} and name = ${name}`,
    ),
  )
  return Number(rows[0]!.id)
}

beforeAll(async () => {
  t = await startTestApp()
  const a = await t.account()
  const b = await t.account()
  owner = {
    accountId: a.accountId,
    domainId: await addDomain(a, 'src.example'),
    otherDomainId: await addDomain(a, 'other.example'),
  }
  stranger = { accountId: b.accountId, domainId: await addDomain(b, 'src.example') }
  const tenSigners = Array.from({ length: 10 }, (_, i) => pass(`esp${9 - i}.example`))
  await store(owner.accountId, owner.domainId, 'r1', DAY1, [
    record('192.0.2.1', 60, { dkim: [pass('src.example')], spf: [spf('src.example', 'pass')] }),
    record('192.0.2.1', 40, {
      disposition: 'quarantine',
      dkim: tenSigners,
      spf: [spf('bounce.esp.example', 'fail')],
    }),
    record('2001:db8::1', 5, { disposition: 'reject', reasons: [{ type: 'forwarded', comment: null }] }),
  ])
  await store(owner.accountId, owner.domainId, 'r2', DAY2, [
    record('192.0.2.1', 10, { dkim: [pass('src.example')], spf: [spf('src.example', 'fail')] }),
  ])
  // Same IPs, other tenants: another account's domain of the same name, and the owner's other domain.
  await store(stranger.accountId, stranger.domainId, 'r1', DAY1, [record('192.0.2.1', 1000)])
  await store(owner.accountId, owner.otherDomainId, 'r3', DAY1, [record('192.0.2.1', 500)])
  await db().execute(sql`insert into source_ips (ip, ptr, ptr_status, checked_at)
    values ('192.0.2.1', 'mail.src.example', 'ok', now())`)
}, 60_000)
afterAll(() => t.close())

const scope = (from = DAY1, to = DAY2) => ({ accountId: owner.accountId, domainId: owner.domainId, from, to })

test('figures per IP are weighted by count and scoped to the account and domain', async () => {
  const stats = await sourceStats(db(), scope())
  expect(stats.map((s) => s.ip)).toEqual(['192.0.2.1', '2001:db8::1'])
  expect(stats[0]).toEqual({
    ip: '192.0.2.1',
    messages: 110,
    dmarcPass: 70,
    dkimAligned: 70,
    spfAligned: 60,
    dkimPass: 110,
    spfPass: 60,
    forwarded: 0,
    quarantined: 40,
    rejected: 0,
    firstSeen: DAY1,
    lastSeen: DAY2,
    ptr: 'mail.src.example',
    // The distinct union, first 8 in order: the rollup row of 10 signers kept 8 of them already.
    dkimDomains: [
      'esp2.example',
      'esp3.example',
      'esp4.example',
      'esp5.example',
      'esp6.example',
      'esp7.example',
      'esp8.example',
      'esp9.example',
    ],
    spfDomains: ['bounce.esp.example', 'src.example'],
  })
  expect(stats[1]).toMatchObject({ messages: 5, dmarcPass: 0, rejected: 5, forwarded: 5, ptr: null })
  const stranger_ = await sourceStats(db(), { ...stranger, from: DAY1, to: DAY2 })
  expect(stranger_.map((s) => [s.ip, s.messages])).toEqual([['192.0.2.1', 1000]])
  // The stranger's account with the owner's domain id reads nothing.
  expect(await sourceStats(db(), { ...scope(), accountId: stranger.accountId })).toEqual([])
})

test('the period and the IP filter (any IPv6 spelling) narrow the figures', async () => {
  const day2 = await sourceStats(db(), scope(DAY2, DAY2))
  expect(day2).toHaveLength(1)
  expect(day2[0]).toMatchObject({ ip: '192.0.2.1', messages: 10, dmarcPass: 10, firstSeen: DAY2 })
  const one = await sourceStats(db(), { ...scope(), ip: '2001:DB8:0:0::1' })
  expect(one.map((s) => s.ip)).toEqual(['2001:db8::1'])
  expect(await sourceStats(db(), { ...scope(), ip: '198.51.100.1' })).toEqual([])
})

test('daily volumes come from the domain totals', async () => {
  expect(await dailyVolumes(db(), scope())).toEqual([
    { day: DAY1, messages: 105, dmarcPass: 60 },
    { day: DAY2, messages: 10, dmarcPass: 10 },
  ])
  expect(await dailyVolumes(db(), { ...scope(), accountId: stranger.accountId })).toEqual([])
})

test('overrides are set, updated, kept per domain and account, and removed', async () => {
  const ids = { accountId: owner.accountId, domainId: owner.domainId }
  const now = new Date('2026-10-07T10:00:00Z')
  const set = await setOverride(db(), { ...ids, ip: '2001:db8::1', status: 'forwarder', note: 'list', now })
  expect(set).toEqual({ ip: '2001:db8::1', status: 'forwarder', note: 'list', updatedAt: now })
  // Note omitted: kept; the status changes.
  const later = new Date('2026-10-08T10:00:00Z')
  await setOverride(db(), { ...ids, ip: '2001:0db8::0001', status: 'legitimate', now: later })
  expect(await listOverrides(db(), ids)).toEqual([
    { ip: '2001:db8::1', status: 'legitimate', note: 'list', updatedAt: later },
  ])
  // Another account naming the owner's domain id writes and reads nothing.
  const foreign = { accountId: stranger.accountId, domainId: owner.domainId }
  expect(
    await setOverride(db(), { ...foreign, ip: '192.0.2.1', status: 'unwanted', note: null, now }),
  ).toBeNull()
  expect(await listOverrides(db(), foreign)).toEqual([])
  await setOverride(db(), { ...foreign, ip: '2001:db8::1', status: null, now })
  expect(await listOverrides(db(), ids)).toHaveLength(1)
  expect(await listOverrides(db(), { accountId: owner.accountId, domainId: owner.otherDomainId })).toEqual([])
  // null removes it.
  expect(await setOverride(db(), { ...ids, ip: '2001:db8::1', status: null, now })).toBeNull()
  expect(await listOverrides(db(), ids)).toEqual([])
})
