import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import type { AlertCandidate, AlertType } from '../../domain/alerts/alert.ts'
import { evaluatePosture } from '../../domain/alerts/evaluation.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { domains } from '../../infrastructure/db/schema/domains.ts'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import { eventsOf } from '../../infrastructure/repositories/pg-event-outbox.ts'
import { alertEvaluationDeps } from '../../src/compose/alerts.ts'
import { stores } from '../../src/compose/stores.ts'
import { type DnsTestServer, startDnsServer, type Zone } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// The alerts API (docs/api.md, docs/alerts.md): list with filters and pages, get, resolve, the deprecated
// /v1/alerts alias, 404s for other accounts; and one alert end to end, from a posture check against
// a real DNS server on loopback, through the evaluation job, to the outbox.

const zone: Zone = {
  'alerting.example': [
    { type: 'TXT', data: 'v=spf1 -all' },
    { type: 'MX', data: { preference: 10, exchange: 'mx.alerting.example' } },
  ],
  'mx.alerting.example': [{ type: 'A', data: '192.0.2.30' }],
}

let dns: DnsTestServer
let t: TestApp
let owner: TestAccount
let stranger: TestAccount
const seeded: Record<string, number> = {}

const db = () => t.db.database.db
const dataOf = (event: { data: unknown }) => event.data as Record<string, unknown>
const get = (path: string, token = owner.token) => t.request('GET', `/api/v1${path}`, { token })
const post = (path: string, token = owner.token) => t.request('POST', `/api/v1${path}`, { token })

async function domainId(accountId: string, name: string): Promise<number> {
  const rows = await db()
    .select({ id: domains.id })
    .from(domains)
    .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
  return rows[0]!.id
}

const candidate = (type: AlertType, severity: AlertCandidate['severity'], subject = ''): AlertCandidate => ({
  type,
  subject,
  severity,
  title: `${type} ${subject}`.trim(),
  details: { evidence: { failureRate: 0.5, previousCheckAt: null }, remedy: 'Do it.' },
})

/** Opens an alert at a given time, as an evaluation would. */
async function seed(name: string | null, c: AlertCandidate, iso: string): Promise<number> {
  const store = pgAlertStore(db())
  const id = name === null ? null : await domainId(owner.accountId, name)
  await store.applyPlan(owner.accountId, id, { create: [c], update: [], resolve: [] }, new Date(iso))
  const listed = await store.list(owner.accountId, { status: 'open' }, { page: 1, perPage: 100 })
  return listed.items.find((a) => a.type === c.type && a.subject === c.subject)!.number
}

beforeAll(async () => {
  dns = await startDnsServer(zone)
  t = await startTestApp({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
    INGEST_DOMAIN: 'in.dmarcwatch.test',
    // The date edge cases below ask more than the default per minute.
    RATE_LIMIT_API_PER_MINUTE: '10000',
  })
  owner = await t.account()
  stranger = await t.account()
  for (const name of ['alerting.example', 'listed.example', 'other.example']) {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: name },
    })
    expect(res.status).toBe(201)
  }
  seeded.failure = await seed(
    'listed.example',
    candidate('dmarc_failure_rate', 'high'),
    '2026-05-01T10:00:00Z',
  )
  seeded.source = await seed(
    'listed.example',
    candidate('new_unknown_source', 'medium', 'ip:192.0.2.9'),
    '2026-05-02T10:00:00Z',
  )
  seeded.spf = await seed('other.example', candidate('spf_missing', 'high'), '2026-05-03T10:00:00Z')
  seeded.webhook = await seed(null, candidate('webhook_delivery_failing', 'high'), '2026-05-04T10:00:00Z')
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

describe('GET /alerts', () => {
  test('newest first, every field, snake_case details', async () => {
    const res = await get('/alerts')
    expect(res.status).toBe(200)
    expect(res.body.meta).toEqual({ total: 4, page: 1, per_page: 25, last_page: 1 })
    expect(res.body.data.map((a: { alert_id: string }) => a.alert_id)).toEqual([
      seeded.webhook,
      seeded.spf,
      seeded.source,
      seeded.failure,
    ])
    expect(res.body.data[0]).toEqual({
      alert_id: seeded.webhook,
      domain: null,
      type: 'webhook_delivery_failing',
      subject: '',
      severity: 'high',
      title: 'webhook_delivery_failing',
      details: { evidence: { failure_rate: 0.5, previous_check_at: null }, remedy: 'Do it.' },
      status: 'open',
      resolution: null,
      created_at: '2026-05-04T10:00:00.000Z',
      updated_at: '2026-05-04T10:00:00.000Z',
      resolved_at: null,
    })
    expect(res.body.data[2]).toMatchObject({ domain: 'listed.example', subject: 'ip:192.0.2.9' })
  })

  test('filters: status, severity, domain, type, since, until', async () => {
    const ids = async (query: string) =>
      (await get(`/alerts?${query}`)).body.data.map((a: { alert_id: string }) => a.alert_id)
    expect(await ids('status=open')).toHaveLength(4)
    expect(await ids('status=resolved')).toEqual([])
    expect(await ids('status=all&severity=medium')).toEqual([seeded.source])
    expect(await ids('domain=listed.example')).toEqual([seeded.source, seeded.failure])
    // Domain names are normalised like everywhere else.
    expect(await ids('domain=LISTED.example.')).toEqual([seeded.source, seeded.failure])
    expect(await ids('domain=unknown.example')).toEqual([])
    expect(await ids('type=spf_missing')).toEqual([seeded.spf])
    expect(await ids('since=2026-05-03')).toEqual([seeded.webhook, seeded.spf])
    expect(await ids('since=2026-05-02T10:00:00.001Z')).toEqual([seeded.webhook, seeded.spf])
    // A date as `until` covers its whole day; a timestamp is inclusive.
    expect(await ids('until=2026-05-02')).toEqual([seeded.source, seeded.failure])
    expect(await ids('until=2026-05-02T10:00:00Z')).toEqual([seeded.source, seeded.failure])
    expect(await ids('since=2026-05-02T12:00:00%2B02:00&until=2026-05-03T10:00:00Z')).toEqual([
      seeded.spf,
      seeded.source,
    ])
  })

  test('pages, and a page past the end is empty with the same meta', async () => {
    const second = await get('/alerts?per_page=3&page=2')
    expect(second.body.data.map((a: { alert_id: string }) => a.alert_id)).toEqual([seeded.failure])
    expect(second.body.meta).toEqual({ total: 4, page: 2, per_page: 3, last_page: 2 })
    const past = await get('/alerts?per_page=3&page=9')
    expect(past.status).toBe(200)
    expect(past.body).toEqual({ data: [], meta: { total: 4, page: 9, per_page: 3, last_page: 2 } })
  })

  test('invalid filters are validation errors on their field', async () => {
    const cases: [string, string][] = [
      ['status=closed', 'status'],
      ['severity=urgent', 'severity'],
      ['type=bogus', 'type'],
      ['per_page=500', 'per_page'],
      ['page=0', 'page'],
      ['since=yesterday', 'since'],
      ['since=2026-02-30', 'since'],
      ['until=2026-05-01T10:00:00', 'until'],
      ['domain=http://x.example/', 'domain'],
      ['since=2026-05-03&until=2026-05-01', 'until'],
    ]
    for (const [query, field] of cases) {
      const res = await get(`/alerts?${query}`)
      expect(res.status, query).toBe(400)
      expect(Object.keys(res.body.errors), query).toEqual([field])
      expect(res.body.message).toBeString()
    }
    expect((await get('/alerts?status=closed')).body.errors.status[0]).toBe(
      'The status field must be one of: open, resolved, all.',
    )
  })

  test('another account sees none of them', async () => {
    const res = await get('/alerts', stranger.token)
    expect(res.body).toEqual({ data: [], meta: { total: 0, page: 1, per_page: 25, last_page: 1 } })
  })

  test('no token: 401, never a validation error', async () => {
    const res = await t.request('GET', '/api/v1/alerts?status=closed')
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_token')
  })
})

describe('GET /alerts/{alert} and POST /alerts/{alert}/resolve', () => {
  test("one alert; unknown, malformed and another account's ids are 404 not_found", async () => {
    const res = await get(`/alerts/${seeded.spf}`)
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ alert_id: seeded.spf, domain: 'other.example', status: 'open' })
    for (const [path, token] of [
      [`/alerts/${seeded.spf}`, stranger.token],
      ['/alerts/999999999', owner.token],
      [`/alerts/${seeded.spf}/resolve`, stranger.token],
    ] as const) {
      const answer = path.endsWith('/resolve') ? await post(path, token) : await get(path, token)
      expect(answer.status, path).toBe(404)
      expect(answer.body).toEqual({ error: 'not_found', message: 'No such alert in your account.' })
    }
    expect((await get(`/alerts/${seeded.spf}`)).body.data.status).toBe('open')
    // alert_id is an integer (docs/alerts.md): anything else in its place is a 400 on `alert`.
    expect(Number.isSafeInteger(seeded.spf)).toBe(true)
    for (const path of ['/alerts/not-an-id', '/alerts/00000000-0000-4000-8000-000000000000', '/alerts/0']) {
      const answer = await get(path)
      expect(answer.status, path).toBe(400)
      expect(Object.keys(answer.body.errors)).toEqual(['alert'])
    }
  })

  test('resolves once; resolving again answers 200 unchanged and sends no second event', async () => {
    t.clock.now = new Date('2026-05-05T09:00:00Z')
    const first = await post(`/alerts/${seeded.spf}/resolve`)
    expect(first.status).toBe(200)
    expect(first.body.data).toMatchObject({
      status: 'resolved',
      resolution: 'user',
      resolved_at: '2026-05-05T09:00:00.000Z',
    })
    t.clock.now = new Date('2026-05-05T10:00:00Z')
    const again = await post(`/alerts/${seeded.spf}/resolve`)
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    const events = (await eventsOf(db(), owner.accountId)).filter((e) => e.type === 'alert.resolved')
    expect(events.map((e) => e.data)).toEqual([
      {
        alert_id: seeded.spf,
        domain: 'other.example',
        severity: 'high',
        title: 'spf_missing',
        resolved_at: '2026-05-05T09:00:00.000Z',
        reason: 'user',
      },
    ])
    expect(
      (await get('/alerts?status=resolved')).body.data.map((a: { alert_id: string }) => a.alert_id),
    ).toEqual([seeded.spf])
    t.clock.now = new Date()
  })
})

describe('since and until over the years 0001-9999', () => {
  // An account of its own, with alerts at both ends of what PostgreSQL and toISOString share, and
  // one in a year below 100, which Date.UTC would have read as 19xx.
  let edges: TestAccount
  const at: Record<string, number> = {}
  const ids = async (query: string) => {
    const res = await get(`/alerts?${query}`, edges.token)
    expect(res.status, query).toBe(200)
    return res.body.data.map((a: { alert_id: string }) => a.alert_id)
  }

  beforeAll(async () => {
    edges = await t.account()
    const store = pgAlertStore(db())
    for (const [subject, iso] of [
      ['first', '0001-01-01T00:00:00.000Z'],
      ['early', '0050-06-01T00:00:00.000Z'],
      ['now', '2026-05-02T10:00:00.000Z'],
      ['last', '9999-12-31T23:59:59.999Z'],
    ] as const) {
      const plan = {
        create: [candidate('webhook_delivery_failing', 'high', subject)],
        update: [],
        resolve: [],
      }
      await store.applyPlan(edges.accountId, null, plan, new Date(iso))
    }
    // Read as PostgreSQL holds them: the API's own reading of created_at is not under test here.
    const stored = rowsOf<{ subject: string; id: number; created: string }>(
      await db().execute(sql`select subject, number::int as id, to_char(created_at at time zone 'UTC',
          'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created from alerts where account_id = ${edges.accountId}`),
    )
    for (const row of stored) at[row.subject] = row.id
    expect(Object.fromEntries(stored.map((row) => [row.subject, row.created]))).toEqual({
      first: '0001-01-01T00:00:00.000Z',
      early: '0050-06-01T00:00:00.000Z',
      now: '2026-05-02T10:00:00.000Z',
      last: '9999-12-31T23:59:59.999Z',
    })
  })

  test('the last day and the last millisecond of 9999 (a 500 before) include the last alert', async () => {
    const all = [at.last, at.now, at.early, at.first]
    expect(await ids('until=9999-12-31')).toEqual(all)
    expect(await ids('until=9999-12-31T23:59:59.999Z')).toEqual(all)
    expect(await ids('until=9999-12-31T23:59:59.998Z')).toEqual(all.slice(1))
    expect(await ids('since=9999-12-31T23:59:59.999Z')).toEqual([at.last])
    expect(await ids('since=9999-12-31&until=9999-12-31')).toEqual([at.last])
    // The offset is applied: 23:59:59+23:59 is 00:00:59Z that day.
    expect(await ids('until=9999-12-31T23:59:59%2B23:59')).toEqual(all.slice(1))
    expect(await ids('since=9999-12-31T23:59:59%2B23:59')).toEqual([at.last])
  })

  test('year 1 and years below 100 are themselves, not 1901 or 1950', async () => {
    expect(await ids('since=0001-01-01')).toEqual([at.last, at.now, at.early, at.first])
    expect(await ids('until=0001-01-01')).toEqual([at.first])
    expect(await ids('until=0001-01-01T00:00:00Z')).toEqual([at.first])
    expect(await ids('since=0001-01-01T00:00:00.001Z&until=0050-06-01')).toEqual([at.early])
    expect(await ids('since=0050-06-01T00:00:00Z&until=0050-06-01T00:00:00Z')).toEqual([at.early])
    expect(await ids('since=0001-01-01T00:00:00-23:59')).toEqual([at.last, at.now, at.early])
    expect(await ids('until=0001-01-01T00:00:00-23:59')).toEqual([at.first])
  })

  test('fractions finer than a millisecond are exact, never rounded across an alert', async () => {
    expect(await ids('since=2026-05-02T10:00:00.0000001Z')).toEqual([at.last])
    expect(await ids('until=2026-05-02T10:00:00.000999999Z')).toEqual([at.now, at.early, at.first])
    expect(await ids('since=9999-12-31T23:59:59.998000001Z')).toEqual([at.last])
    expect(await ids('until=9999-12-31T23:59:59.998999999Z')).toEqual([at.now, at.early, at.first])
    // Both inside one millisecond, until after since: no alert, and not an error.
    expect(await ids('since=2026-05-02T10:00:00.0001Z&until=2026-05-02T10:00:00.0005Z')).toEqual([])
    const reversed = await get('/alerts?since=2026-05-02T10:00:00.0005Z&until=2026-05-02T10:00:00.0001Z')
    expect(reversed.status).toBe(400)
    expect(reversed.body.errors).toEqual({ until: ['The until field must not be before since.'] })
  })

  test('real calendar days: leap years by the Gregorian rules', async () => {
    for (const day of ['2024-02-29', '2000-02-29', '0004-02-29', '2026-04-30', '2026-12-31'])
      expect((await get(`/alerts?since=${day}&until=${day}`, edges.token)).status, day).toBe(200)
  })

  test('impossible dates and times and instants outside 0001-9999 are 400 on their field', async () => {
    const impossible = 'must be a real date and time'
    const outside = 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'
    const cases: [string, string][] = [
      // A 500 before: PostgreSQL refused +010000-01-01T23:58:59Z and 0000-12-31T00:01:00.001Z.
      ['9999-12-31T23:59:59-23:59', outside],
      ['0001-01-01T00:00:00%2B23:59', outside],
      ['9999-12-31T23:59:59.9990001Z', outside],
      ['0001-01-01T00:00:00%2B00:01', outside],
      ['0000-12-31', outside],
      ['0000-12-31T23:59:59.999Z', outside],
      ['2026-02-30', impossible],
      ['2026-02-30T00:00:00Z', impossible],
      ['2025-02-29', impossible],
      ['1900-02-29', impossible],
      ['2026-04-31', impossible],
      ['2026-13-01', impossible],
      ['2026-00-10', impossible],
      ['2026-05-00', impossible],
      ['2026-05-01T24:00:00Z', impossible],
      ['2026-05-01T23:60:00Z', impossible],
      ['2016-12-31T23:59:60Z', impossible],
      ['2026-05-01T00:00:00%2B24:00', impossible],
      ['2026-05-01T00:00:00-23:60', impossible],
      ['2026-05-01T00:00:00-99:99', impossible],
      ['10000-01-01', 'must be an ISO 8601 date'],
      ['%2B010000-01-01T00:00:00Z', 'must be an ISO 8601 date'],
      ['2026-05-01T00:00:00%2B0200', 'must be an ISO 8601 date'],
      ['2026-05-01T00:00:00.1234567890Z', 'must be an ISO 8601 date'],
    ]
    for (const [value, message] of cases) {
      for (const field of ['since', 'until']) {
        const res = await get(`/alerts?${field}=${value}`, edges.token)
        expect(res.status, `${field}=${value}`).toBe(400)
        expect(Object.keys(res.body.errors), `${field}=${value}`).toEqual([field])
        expect(res.body.errors[field][0], `${field}=${value}`).toStartWith(`The ${field} field ${message}`)
      }
    }
  })
})

describe('the /v1/alerts alias', () => {
  test('answers identically and is deprecated in OpenAPI', async () => {
    for (const path of ['/alerts', '/alerts?domain=listed.example&per_page=1', `/alerts/${seeded.failure}`]) {
      const canonical = await get(path)
      const alias = await get(`/v1${path}`)
      expect(alias.status, path).toBe(200)
      expect(alias.body, path).toEqual(canonical.body)
    }
    expect((await get('/v1/alerts?status=closed')).status).toBe(400)
    expect((await get(`/v1/alerts/${seeded.failure}`, stranger.token)).status).toBe(404)
    const resolved = await post(`/v1/alerts/${seeded.failure}/resolve`)
    expect(resolved.body.data).toMatchObject({ alert_id: seeded.failure, status: 'resolved' })
    expect((await get(`/alerts/${seeded.failure}`)).body.data.status).toBe('resolved')

    const spec = (await t.request('GET', '/openapi/json')).body
    for (const [path, method] of [
      ['/api/v1/v1/alerts', 'get'],
      ['/api/v1/v1/alerts/{alert}', 'get'],
      ['/api/v1/v1/alerts/{alert}/resolve', 'post'],
    ] as const) {
      expect(spec.paths[path][method].deprecated, path).toBe(true)
      expect(spec.paths[path.replace('/v1/v1/', '/v1/')][method].deprecated, path).toBeUndefined()
    }
    expect(spec.components.schemas.AlertList).toBeDefined()
  })
})

describe('end to end: a posture check to an alert and back', () => {
  test('no DMARC record opens dmarc_missing; publishing one resolves it (condition_cleared)', async () => {
    const id = await domainId(owner.accountId, 'alerting.example')
    const deps = alertEvaluationDeps(stores(t.runtime.database), t.runtime)
    const ref = { accountId: owner.accountId, domainId: id }
    const dmarcMissing = async () =>
      (await get('/alerts?domain=alerting.example&type=dmarc_missing')).body.data as Record<string, any>[]

    t.clock.now = new Date('2026-06-01T10:00:00Z')
    const first = await get('/domains/alerting.example/status?refresh=1')
    expect(first.body.data.dmarc_policy).toBe('missing')
    expect(await evaluatePosture(deps, ref)).toMatchObject({ created: expect.any(Number) })
    const [opened] = await dmarcMissing()
    expect(opened).toMatchObject({ status: 'open', severity: 'critical', domain: 'alerting.example' })
    expect(opened!.details.fix).toMatchObject({ type: 'TXT', name: '_dmarc.alerting.example' })
    const created = (await eventsOf(db(), owner.accountId)).filter(
      (e) => e.type === 'alert.created' && dataOf(e).alert_id === opened!.alert_id,
    )
    expect(created.map((e) => e.data)).toEqual([
      { alert_id: opened!.alert_id, domain: 'alerting.example', severity: 'critical', title: opened!.title },
    ])

    // Evaluating the same check again changes nothing.
    expect(await evaluatePosture(deps, ref)).toEqual({ created: 0, updated: 0, resolved: 0 })

    dns.set('_dmarc.alerting.example', 'TXT', [{ data: opened!.details.fix.value }])
    t.clock.now = new Date('2026-06-01T12:00:00Z') // past every cached answer
    const second = await get('/domains/alerting.example/status?refresh=1')
    expect(second.body.data.dmarc_policy).toBe('none')
    await evaluatePosture(deps, ref)

    const [resolved] = await dmarcMissing()
    expect(resolved).toMatchObject({
      alert_id: opened!.alert_id,
      status: 'resolved',
      resolution: 'condition_cleared',
      resolved_at: '2026-06-01T12:00:00.000Z',
    })
    const events = (await eventsOf(db(), owner.accountId)).filter(
      (e) => dataOf(e).alert_id === opened!.alert_id,
    )
    expect(events.map((e) => [e.type, dataOf(e).reason])).toEqual([
      ['alert.created', undefined],
      ['alert.resolved', 'condition_cleared'],
    ])
    // The change rules compared the two checks: the record was published.
    const published = (await get('/alerts?domain=alerting.example&type=dns_record_changed')).body.data
    expect(published).toHaveLength(1)
    expect(published[0]).toMatchObject({ subject: 'dmarc', severity: 'info', status: 'open' })
    expect(published[0].details.evidence).toMatchObject({ change: 'added', previous: null })
    t.clock.now = new Date()
  })
})
