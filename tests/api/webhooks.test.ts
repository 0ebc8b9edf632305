import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { RETRY_DELAYS_MS } from '../../domain/webhooks/schedule.ts'
import { events } from '../../infrastructure/db/schema/events.ts'
import { signWebhook } from '../../infrastructure/http/webhook-signature.ts'
import { DELIVER_WEBHOOK, type DeliverJob } from '../../infrastructure/queue/catalogue.ts'
import { webhookJobDeps } from '../../src/compose/webhooks.ts'
import { registerWebhookJobs } from '../../src/jobs/webhooks.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts'

// Webhooks end to end (settings alone: webhook-settings.test.ts): settings through the API, an event from a real domain verification, the
// relay and delivery jobs running in-process on pg-boss, and a real receiver that verifies every
// signature as docs/webhooks.md tells customers to. The 5 s retry runs in real time; the longer
// steps of the schedule are checked on the queued job's startAfter and then pulled in, and the
// hourly limit with a clock moved to the next hour (the issue allows a controllable clock there).

const LIMIT = 5
let t: TestApp
let dns: DnsTestServer
const clock = { offsetMs: 0 }
const now = () => new Date(Date.now() + clock.offsetMs)
const receivers: WebhookReceiver[] = []
const boss = () => t.runtime.boss!

const api = (method: string, path: string, account: TestAccount, body?: unknown) =>
  t.request(method, `/api/v1/webhooks${path}`, { token: account.token, body })
const delivery = async (account: TestAccount, id: string) =>
  (await api('GET', `/deliveries/${id}`, account)).body.data

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const value = await read()
    if (done(value)) return value
    await Bun.sleep(50)
  }
  throw new Error(`timed out waiting for ${what}`)
}

const settled = (account: TestAccount, id: string, attempts: number) =>
  until(
    () => delivery(account, id),
    (d) => d !== undefined && d.attempts.length >= attempts && d.attempts.length === d.attempt_count,
    `${attempts} attempts of ${id}`,
  )

/** The queued job for `attempt` of a delivery: its due time is checked, then it is run now. */
async function pullIn(id: string, attempt: number): Promise<Date> {
  const jobs = await boss().findJobs<DeliverJob>(DELIVER_WEBHOOK.name, {
    data: { deliveryId: id, attempt },
    queued: true,
  })
  expect(jobs).toHaveLength(1)
  await boss().update(DELIVER_WEBHOOK.name, undefined, { id: jobs[0]!.id, startAfter: new Date() })
  return jobs[0]!.startAfter
}

/** An account whose webhook points at a fresh receiver that knows the account's secret. */
async function connected(): Promise<{ account: TestAccount; receiver: WebhookReceiver }> {
  const account = await t.account()
  const secret = (await api('POST', '/secret/rotate', account)).body.data.secret
  const receiver = startWebhookReceiver({ secret, now })
  receivers.push(receiver)
  expect((await api('PUT', '', account, { url: receiver.url })).status).toBe(200)
  return { account, receiver }
}

async function ping(account: TestAccount): Promise<string> {
  const res = await api('POST', '/test', account)
  expect(res.status).toBe(202)
  expect(res.body.data).toMatchObject({ event: 'ping', status: 'pending', attempts: [] })
  return res.body.data.id
}

beforeAll(async () => {
  dns = await startDnsServer({})
  t = await startTestApp(
    {
      WEBHOOK_ALLOW_PRIVATE: '1',
      RATE_LIMIT_WEBHOOKS_PER_HOUR: String(LIMIT),
      RATE_LIMIT_API_PER_MINUTE: '10000',
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '300',
    },
    { queue: true },
  )
  // The app's clock follows the test clock (real time unless a test moves it).
  Object.defineProperty(t.clock, 'now', { get: now })
  await registerWebhookJobs(boss(), { ...webhookJobDeps(t.runtime, boss()), now })
}, 60_000)
afterAll(async () => {
  await t.close()
  for (const receiver of receivers) await receiver.stop()
  await dns.stop()
})

describe('delivery', () => {
  test('a domain verification reaches the receiver signed, with the documented headers', async () => {
    const { account, receiver } = await connected()
    await t.request('POST', '/api/v1/domains', {
      token: account.token,
      body: { domain_name: 'hooked.example' },
    })
    const domain = (await t.request('GET', '/api/v1/domains/hooked.example', { token: account.token })).body
      .data
    dns.set(domain.verification.txt_name, 'TXT', [{ data: domain.verification.txt_value }])
    const verify = await t.request('POST', '/api/v1/domains/hooked.example/verify', { token: account.token })
    expect(verify.body.data.verified).toBe(true)

    const [event] = await t.db.database.db
      .select()
      .from(events)
      .where(eq(events.accountId, account.accountId))
    const done = await settled(account, event!.id, 1)
    expect(done).toMatchObject({
      event: 'domain.verified',
      status: 'delivered',
      attempt_count: 1,
      url: receiver.url,
    })
    expect(done.attempts[0]).toMatchObject({
      attempt: 1,
      verdict: 'delivered',
      status: 200,
      outcome: 'HTTP 200',
    })
    expect(done.attempts[0].latency_ms).toBeNumber()
    expect(done.attempts[0].response_snippet).toBe('{"received":true}')

    expect(receiver.arrivals).toHaveLength(1)
    const arrival = receiver.arrivals[0]!
    expect(arrival.verified).toBe(true)
    expect(arrival.headers).toMatchObject({
      'content-type': 'application/json',
      'x-webhook-event': 'domain.verified',
      'x-webhook-id': event!.id,
      'user-agent': 'dmarcwatch-webhooks/1',
    })
    const body = JSON.parse(arrival.body)
    expect(Object.keys(body)).toEqual(['event', 'timestamp', 'data'])
    expect(body.data).toEqual({ domain: 'hooked.example', verified_at: verify.body.data.domain.verified_at })
    expect(body.timestamp).toBe(done.attempts[0].at)
  })

  test('500 twice then 200: attempts at 0 s, 5 s (real time) and 30 s after the first failure', async () => {
    const { account, receiver } = await connected()
    receiver.failNext(2, 500)
    const id = await ping(account)
    const first = await settled(account, id, 1)
    expect(first).toMatchObject({ status: 'pending', attempt_count: 1 })
    expect(first.attempts[0]).toMatchObject({
      verdict: 'retry',
      status: 500,
      response_snippet: 'scripted 500',
    })
    const failedAt = Date.parse(first.first_failure_at)
    expect(Date.parse(first.next_attempt_at)).toBe(failedAt + RETRY_DELAYS_MS[1])
    // A running chain cannot be redelivered.
    expect((await api('POST', `/deliveries/${id}/redeliver`, account)).status).toBe(409)

    const second = await settled(account, id, 2)
    const [a1, a2] = receiver.arrivals
    expect(a2!.at.getTime() - a1!.at.getTime()).toBeGreaterThanOrEqual(4500)
    expect(Date.parse(second.next_attempt_at)).toBe(failedAt + RETRY_DELAYS_MS[2])
    expect((await pullIn(id, 3)).getTime()).toBe(failedAt + RETRY_DELAYS_MS[2])

    const third = await settled(account, id, 3)
    expect(third).toMatchObject({ status: 'delivered', attempt_count: 3, next_attempt_at: null })
    expect(third.attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 200])
    expect(receiver.arrivals.map((a) => a.headers['x-webhook-id'])).toEqual([id, id, id])
    expect(receiver.arrivals.every((a) => a.verified)).toBe(true)
    // Re-signed per attempt: each body carries its own attempt's time.
    expect(new Set(receiver.arrivals.map((a) => JSON.parse(a.body).timestamp)).size).toBe(3)
  }, 20_000)

  test('five failures: 5 min and 1 h steps from the first failure, then failed and listed', async () => {
    const { account, receiver } = await connected()
    receiver.failNext(5, 503)
    const id = await ping(account)
    const failedAt = Date.parse((await settled(account, id, 1)).first_failure_at)
    for (let attempt = 2; attempt <= 5; attempt++) {
      expect((await pullIn(id, attempt)).getTime()).toBe(failedAt + RETRY_DELAYS_MS[attempt - 1]!)
      await settled(account, id, attempt)
    }
    const failed = await delivery(account, id)
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 5, next_attempt_at: null })
    expect(await boss().findJobs(DELIVER_WEBHOOK.name, { data: { deliveryId: id }, queued: true })).toEqual(
      [],
    )
    const listed = (await api('GET', '/deliveries?status=failed', account)).body
    expect(listed.data.map((d: { id: string }) => d.id)).toEqual([id])
  })

  test('404 is final after one attempt; a redelivery starts a new chain on the same id', async () => {
    const { account, receiver } = await connected()
    receiver.failNext(1, 404)
    const id = await ping(account)
    const failed = await until(
      () => delivery(account, id),
      (d) => d?.status === 'failed',
      'failure',
    )
    expect(failed.attempts).toHaveLength(1)
    expect(failed.attempts[0]).toMatchObject({ verdict: 'give_up', status: 404 })
    expect(await boss().findJobs(DELIVER_WEBHOOK.name, { data: { deliveryId: id }, queued: true })).toEqual(
      [],
    )

    const stranger = await t.account()
    expect((await api('GET', `/deliveries/${id}`, stranger)).body.error).toBe('not_found')
    expect((await api('POST', `/deliveries/${id}/redeliver`, stranger)).status).toBe(404)
    expect((await api('GET', '/deliveries', stranger)).body).toMatchObject({ data: [], meta: { total: 0 } })

    const again = await api('POST', `/deliveries/${id}/redeliver`, account)
    expect(again.status).toBe(202)
    expect(again.body.data).toMatchObject({ id, status: 'pending', attempt_count: 0 })
    const done = await until(
      () => delivery(account, id),
      (d) => d?.status === 'delivered',
      'redelivery',
    )
    expect(done.attempts.map((a: { attempt: number; status: number }) => [a.attempt, a.status])).toEqual([
      [1, 404],
      [1, 200],
    ])
    expect(receiver.arrivals.map((a) => a.headers['x-webhook-id'])).toEqual([id, id])
  })

  test('webhooks turned off mid-chain: the next attempt is not sent and the delivery fails', async () => {
    const { account, receiver } = await connected()
    receiver.failNext(1, 502)
    const id = await ping(account)
    await settled(account, id, 1)
    await api('PUT', '', account, { url: null })
    await pullIn(id, 2)
    const failed = await until(
      () => delivery(account, id),
      (d) => d?.status === 'failed',
      'the failure',
    )
    expect(failed.attempts[1]).toMatchObject({
      verdict: 'give_up',
      status: null,
      outcome: 'not sent: no webhook URL is set',
    })
    expect(failed.url).toBe(receiver.url)
    expect(receiver.arrivals).toHaveLength(1)
  })

  test('after a rotation deliveries are signed with the new secret only', async () => {
    const { account, receiver } = await connected()
    const old = receiver.secret
    const fresh = (await api('POST', '/secret/rotate', account)).body.data.secret
    const id = await ping(account)
    // The receiver still holds the old secret: it refuses, and a 401 is final.
    const failed = await until(
      () => delivery(account, id),
      (d) => d?.status === 'failed',
      'refusal',
    )
    expect(failed.attempts[0]).toMatchObject({ status: 401, verdict: 'give_up' })
    const arrival = receiver.arrivals[0]!
    expect(arrival.headers['x-webhook-signature']).toBe(await signWebhook(fresh, arrival.body))
    expect(arrival.headers['x-webhook-signature']).not.toBe(await signWebhook(old, arrival.body))
  })

  test('past the hourly limit a delivery waits for the next hour, then goes', async () => {
    const { account, receiver } = await connected()
    // Mid-hour, so the test never straddles a window by accident.
    const real = Date.now()
    const hour = Math.floor(real / 3_600_000) * 3_600_000
    clock.offsetMs = hour + 1_800_000 - real
    const ids = await Promise.all(Array.from({ length: LIMIT + 1 }, () => ping(account)))
    const nextHour = hour + 3_600_000
    type Row = { id: string; status: string; next_attempt_at: string | null }
    const held = (d: Row) => d.status === 'pending' && Date.parse(d.next_attempt_at ?? '') === nextHour
    const waiting = await until(
      async () => (await api('GET', '/deliveries', account)).body.data as Row[],
      (rows) => rows.filter((d) => d.status === 'delivered').length === LIMIT && rows.some(held),
      'the deferral',
    )
    const deferred = waiting.find(held)!
    expect(ids).toContain(deferred.id)
    expect(deferred).toMatchObject({ attempt_count: 0, attempts: [] })
    expect(receiver.arrivals).toHaveLength(LIMIT)

    clock.offsetMs = nextHour + 1000 - Date.now()
    expect((await pullIn(deferred.id, 1)).getTime()).toBe(nextHour)
    await until(
      () => delivery(account, deferred.id),
      (d) => d?.status === 'delivered',
      'the next hour',
    )
    expect(receiver.arrivals).toHaveLength(LIMIT + 1)
    expect(receiver.arrivals.every((a) => a.verified)).toBe(true)
    clock.offsetMs = 0
  })
})

describe('delivery log', () => {
  test('pages and filters, each delivery with its attempts', async () => {
    const { account } = await connected()
    const ids = [await ping(account), await ping(account), await ping(account)]
    for (const id of ids) await settled(account, id, 1)
    const page = (await api('GET', '/deliveries?status=delivered&per_page=2&page=2', account)).body
    expect(page.meta).toEqual({ total: 3, page: 2, per_page: 2, last_page: 2 })
    expect(page.data).toHaveLength(1)
    expect(page.data[0].attempts[0]).toMatchObject({ attempt: 1, status: 200, verdict: 'delivered' })
    expect(Object.keys(page.data[0].attempts[0]).sort()).toEqual(
      ['at', 'attempt', 'latency_ms', 'outcome', 'response_snippet', 'status', 'verdict'].sort(),
    )
    expect((await api('GET', '/deliveries?status=lost', account)).status).toBe(400)
    expect((await api('GET', '/deliveries/not-a-uuid', account)).status).toBe(404)
  })
})
