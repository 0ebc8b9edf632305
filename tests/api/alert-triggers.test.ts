import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import {
  domainJobKey,
  enqueueReportAlerts,
  evaluateNow,
  REPORT_ALERT_DEBOUNCE_SECONDS,
} from '../../infrastructure/queue/alert-triggers.ts'
import {
  EVALUATE_OPERATIONS_ALERTS,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
} from '../../infrastructure/queue/catalogue.ts'
import { startWorkers } from '../../src/worker.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { ingestMessage } from '../support/report-world.ts'
import { reportXml } from '../support/source-reports.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts'

// Alerts within a minute of the check that finds them (docs/alerts.md, "Storage, jobs and API"):
// the whole app with its worker, a loopback DNS server, and a real webhook receiver. A posture
// check enqueues its domain's evaluation in the transaction that stores it; a stored aggregate
// report enqueues its domain's report rules, debounced to one run per domain per 5-minute slot.
// The schedulers (every 15 minutes, hourly) are not what these tests wait for: the first assertion
// of each test is that the trigger's job exists.

const NO_DMARC = 'nodmarc.example'
// The domain of a failure report from the corpus (tests/fixtures/dmarc-forensic, parsedmarc).
const FAILED = 'domain.de'
const FAILURE_REPORT =
  'tests/fixtures/dmarc-forensic/parsedmarc/DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml'
const SPOOFED = 'spoofed.example'
const DAY = 86_400

let dns: DnsTestServer
let t: TestApp
let owner: TestAccount
let receiver: WebhookReceiver
const boss = () => t.runtime.boss!

async function domainIdOf(name: string): Promise<number> {
  const [row] = rowsOf<{ id: number }>(
    await t.db.database.db.execute(
      sql`select id from domains where account_id = ${owner.accountId} and name = ${name}`,
    ),
  )
  return Number(row!.id)
}

/** The `alert.created` delivery of the open alert of `type` on `domain`, within `ms`. */
async function alertCreated(domain: string, type: string, ms: number) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const listed = await t.request('GET', `/api/v1/alerts?domain=${domain}&type=${type}`, {
      token: owner.token,
    })
    const ids = new Set(listed.body.data.map((a: { alert_id: string }) => a.alert_id))
    const arrival = receiver.arrivals.find(
      (a) => a.headers['x-webhook-event'] === 'alert.created' && ids.has(JSON.parse(a.body).data.alert_id),
    )
    if (arrival !== undefined) return { arrival, data: JSON.parse(arrival.body).data }
    await Bun.sleep(100)
  }
  throw new Error(`no alert.created for ${type} on ${domain} within ${ms} ms`)
}

async function until<T>(read: () => Promise<T>, wanted: T, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if ((await read()) === wanted) return
    await Bun.sleep(50)
  }
  throw new Error(`timed out waiting for ${String(wanted)}`)
}

beforeAll(async () => {
  dns = await startDnsServer({
    [NO_DMARC]: [{ type: 'TXT', data: 'v=spf1 -all' }],
    [SPOOFED]: [{ type: 'TXT', data: 'v=spf1 -all' }],
    [`_dmarc.${SPOOFED}`]: [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  })
  t = await startTestApp(
    {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '300',
      WEBHOOK_ALLOW_PRIVATE: '1',
      RATE_LIMIT_API_PER_MINUTE: '10000',
    },
    { queue: true },
  )
  await startWorkers(boss(), t.runtime)
  owner = await t.account()
  const secret = (await t.request('POST', '/api/v1/webhooks/secret/rotate', { token: owner.token })).body.data
    .secret
  receiver = startWebhookReceiver({ secret })
  const put = await t.request('PUT', '/api/v1/webhooks', { token: owner.token, body: { url: receiver.url } })
  expect(put.status).toBe(200)
  for (const name of [NO_DMARC, SPOOFED, FAILED]) {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: name },
    })
    expect(res.status).toBe(201)
  }
}, 60_000)
afterAll(async () => {
  await t?.close()
  await receiver?.stop()
  await dns?.stop()
})

describe('posture', () => {
  test('a domain without DMARC: alert.created reaches the receiver within 60 s of GET status?refresh=1', async () => {
    const started = Date.now()
    const status = await t.request('GET', `/api/v1/domains/${NO_DMARC}/status?refresh=1`, {
      token: owner.token,
    })
    expect(status.status).toBe(200)
    expect(status.body.data.dmarc_policy).toBe('missing')
    // The check's own job, keyed like the scheduler's, so the two coalesce.
    const key = domainJobKey({ accountId: owner.accountId, domainId: await domainIdOf(NO_DMARC) })
    expect((await boss().findJobs(EVALUATE_POSTURE_ALERTS.name, { key })).length).toBeGreaterThan(0)

    const { arrival, data } = await alertCreated(NO_DMARC, 'dmarc_missing', 60_000)
    const elapsed = arrival.at.getTime() - started
    expect(elapsed).toBeLessThan(60_000)
    expect(arrival.verified).toBe(true)
    expect(data).toMatchObject({ domain: NO_DMARC, severity: 'critical' })
    console.info(`posture alert delivered ${elapsed} ms after the status request`)
  }, 90_000)
})

describe('reports', () => {
  test(
    'a report crossing the spoofing threshold raises its alert within 5 minutes',
    async () => {
      await t.db.database.db.execute(
        sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${SPOOFED}`,
      )
      // Yesterday's report (the report rules read full days, up to yesterday): 80 messages from a host
      // with no PTR, nothing passing, over the 50-message threshold (domain/alerts/rules/reports.ts).
      const today = Math.floor(Date.now() / 1000 / DAY) * DAY
      const xml = reportXml(SPOOFED, 'receiver.example', 'spoof-1', today - DAY, [
        { ip: '203.0.113.66', count: 80 },
      ])
      const raw = multipart([
        attachment('application/gzip', 'spoof-1.xml.gz', Bun.gzipSync(new TextEncoder().encode(xml))),
      ])
      const started = Date.now()
      expect((await ingestMessage(t, owner.token, raw)).status).toBe('processed')
      const key = domainJobKey({ accountId: owner.accountId, domainId: await domainIdOf(SPOOFED) })
      // Sent right after the batch's commit, which is what made the message read as processed.
      await until(
        async () => (await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { key })).length > 0,
        true,
        5_000,
      )

      const { arrival, data } = await alertCreated(SPOOFED, 'spoofing_attempt', 5 * 60_000)
      const elapsed = arrival.at.getTime() - started
      expect(elapsed).toBeLessThan(5 * 60_000)
      expect(arrival.verified).toBe(true)
      expect(data.title).toContain('80 messages')
      console.info(`spoofing alert delivered ${elapsed} ms after the report was sent`)
    },
    6 * 60_000,
  )

  test(
    'a stored failure report raises failure_report_received at once',
    async () => {
      await t.db.database.db.execute(
        sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${FAILED}`,
      )
      const started = Date.now()
      const raw = await Bun.file(FAILURE_REPORT).text()
      expect((await ingestMessage(t, owner.token, raw)).status).toBe('processed')
      // failure_report_received is an operations rule: its account's job, keyed like the scheduler's.
      expect(
        (await boss().findJobs(EVALUATE_OPERATIONS_ALERTS.name, { key: owner.accountId })).length,
      ).toBeGreaterThan(0)
      const { arrival } = await alertCreated(FAILED, 'failure_report_received', 5 * 60_000)
      expect(arrival.at.getTime() - started).toBeLessThan(5 * 60_000)
    },
    6 * 60_000,
  )

  test('debounced: one evaluation per domain per 5-minute slot, a later report evaluated by the next slot', async () => {
    // Domain ids of no domain: their evaluations (if the worker gets to them) find nothing to do.
    // Two domains triggered together, as a batch of reports does (two statements for all of them).
    const ref = { accountId: owner.accountId, domainId: 2_000_000_000 }
    const other = { accountId: owner.accountId, domainId: 2_000_000_001 }
    const slotMs = REPORT_ALERT_DEBOUNCE_SECONDS * 1000
    // Not across a slot boundary: the sends below belong to one slot.
    if (slotMs - (Date.now() % slotMs) < 15_000) await Bun.sleep(slotMs - (Date.now() % slotMs) + 100)
    const sentAt = Date.now()
    const nextSlot = Math.ceil(sentAt / slotMs) * slotMs

    const first = await enqueueReportAlerts(boss(), [ref, other])
    expect(first.every((id) => id !== null)).toBe(true)
    expect(first[0]).not.toBe(first[1])
    // While a job of the key waits unstarted, a report needs none of its own (stately: one queued
    // job per key); once it has run, the slot is spent.
    for (const id of first)
      await until(
        async () => (await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { id: id! }))[0]?.state,
        'completed',
      )
    const second = await enqueueReportAlerts(boss(), [ref, other])
    const third = await enqueueReportAlerts(boss(), [ref, other])
    expect(second.every((id) => id !== null)).toBe(true)
    expect(second).not.toContain(first[0])
    // The third report of the slot finds the second's job waiting: it is evaluated by that one.
    expect(third).toEqual([null, null])
    // A domain new to the slot beside one waiting: evaluated at once, the other left to its job.
    const fresh = { accountId: owner.accountId, domainId: 2_000_000_002 }
    const mixed = await enqueueReportAlerts(boss(), [fresh, ref])
    expect(mixed[0]).not.toBeNull()
    expect(mixed[1]).toBeNull()
    const [freshJob] = await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { id: mixed[0]! })
    expect(freshJob!.startAfter.getTime()).toBeLessThanOrEqual(Date.now())

    for (const [k, key] of [ref, other].map(domainJobKey).entries()) {
      const jobs = await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { key })
      const byId = new Map(jobs.map((job) => [job.id, job]))
      expect(jobs).toHaveLength(2)
      // The first runs at once; the second waits for the next slot, and so runs within 5 minutes.
      expect(byId.get(first[k]!)!.startAfter.getTime()).toBeLessThanOrEqual(Date.now())
      const deferred = byId.get(second[k]!)!.startAfter.getTime()
      expect(deferred).toBeGreaterThanOrEqual(nextSlot)
      expect(deferred).toBeLessThanOrEqual(nextSlot + 2000)
      expect(deferred - sentAt).toBeLessThanOrEqual(slotMs + 2000)
      // Filed in the next slot (pg-boss's singleton_on), so the slot's later reports share it.
      const [row] = rowsOf<{ ms: number }>(
        await t.db.database.db.execute(
          sql`select (extract(epoch from singleton_on) * 1000)::float8 as ms from pgboss.job where id = ${second[k]!}::uuid`,
        ),
      )
      expect(Number(row!.ms)).toBe(nextSlot)
    }

    // An evaluation wanted now (the demo) replaces the waiting debounced job instead of queueing
    // behind it.
    const now = await evaluateNow(boss(), EVALUATE_REPORT_ALERTS, ref, domainJobKey(ref))
    expect(now).not.toBeNull()
    const [replaced] = await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { id: second[0]! })
    expect(replaced!.state).toBe('cancelled')
    const [started] = await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { id: now! })
    expect(started!.startAfter.getTime()).toBeLessThanOrEqual(Date.now())
  }, 60_000)

  test('batches triggering the same domains at once, in any order, never deadlock', async () => {
    // Each batch's inserts take their rows' locks key by key: in different orders, two batches
    // would wait on each other. Keys go in sorted, so ten concurrent batches of 30 domains, half
    // of them reversed, all finish, and each domain has at most one job per slot.
    const refs = Array.from({ length: 30 }, (_, i) => ({
      accountId: owner.accountId,
      domainId: 2_100_000_000 + i,
    }))
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        enqueueReportAlerts(boss(), k % 2 === 0 ? refs : [...refs].reverse()),
      ),
    )
    for (const [i, ref] of refs.entries()) {
      // Each call's answers are in its own order.
      const ids = answers
        .map((answer, k) => answer[k % 2 === 0 ? i : refs.length - 1 - i])
        .filter((id): id is string => typeof id === 'string')
      expect(ids.length).toBeGreaterThanOrEqual(1)
      const jobs = await boss().findJobs(EVALUATE_REPORT_ALERTS.name, { key: domainJobKey(ref) })
      expect(jobs.map((job) => job.id).sort()).toEqual([...ids].sort())
      expect(jobs.length).toBeLessThanOrEqual(2)
    }
  }, 60_000)
})
