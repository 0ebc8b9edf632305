import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { workerEndpoints } from '../../src/routes/metrics.ts'
import { startWorkers } from '../../src/worker.ts'
import { startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// GET /metrics: off without METRICS_TOKEN, refused without the right one, and the figures move with
// what the process does. The registry is per process, so assertions compare before and after.

const TOKEN = 'metrics-token-for-tests-0123456789'
const dnsServer = await startDnsServer({ 'cached.example': [{ type: 'TXT', data: 'v=spf1 -all' }] })
let t: TestApp
let owner: TestAccount

async function scrape(token: string | null = TOKEN) {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` }
  const response = await t.app.handle(new Request('http://localhost/metrics', { headers }))
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** The value of one sample, `name{labels}` exactly as exposed; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

async function until(check: () => Promise<boolean>) {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('metric did not move in time')
    await Bun.sleep(50)
  }
}

beforeAll(async () => {
  t = await startTestApp(
    {
      METRICS_TOKEN: TOKEN,
      DNS_SERVERS: `127.0.0.1:${dnsServer.port}`,
      INGEST_DOMAIN: 'in.dmarcwatch.test',
    },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
}, 60_000)
afterAll(async () => {
  await t.close()
  await dnsServer.stop()
})

describe('GET /metrics', () => {
  test('is not there without METRICS_TOKEN', async () => {
    const off = await startTestApp({}, { db: t.db })
    const res = await off.request('GET', '/metrics', { token: TOKEN })
    expect(res.status).toBe(404)
    expect(res.body.error).toBe('not_found')
  })

  test('answers 401 without a token or with a wrong one', async () => {
    for (const token of [null, 'wrong-token', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const res = await scrape(token)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('Bearer')
      expect(JSON.parse(res.text).error).toBe('invalid_token')
    }
    // An API token is not the metrics token.
    expect((await scrape(owner.token)).status).toBe(401)
  })

  test('counts requests by route pattern, never by raw path', async () => {
    // Elysia runs after-response hooks in setImmediate; on PGlite, whose queries settle in
    // microtasks, they wait for the next turn of the event loop. Let earlier tests' hooks run.
    await Bun.sleep(20)
    const before = (await scrape()).text
    await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 'metrics.example' },
    })
    for (let i = 0; i < 3; i++) await t.request('GET', '/api/v1/domains', { token: owner.token })
    await t.request('GET', '/api/v1/domains/metrics.example', { token: owner.token })
    await t.request('GET', '/no/such/path-12345')
    await Bun.sleep(20)

    const res = await scrape()
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = res.text
    const delta = (series: string) => (sample(text, series) ?? 0) - (sample(before, series) ?? 0)
    expect(delta('http_requests_total{method="GET",route="/api/v1/domains",status="200"}')).toBe(3)
    expect(delta('http_requests_total{method="GET",route="/api/v1/domains/:name",status="200"}')).toBe(1)
    expect(delta('http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
    expect(text).not.toContain('metrics.example')
    expect(text).not.toContain('path-12345')
    expect(
      delta('http_request_duration_seconds_count{method="GET",route="/api/v1/domains"}'),
    ).toBeGreaterThanOrEqual(3)
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{method="GET",route="\/api\/v1\/domains",le="\+Inf"\} \d+/,
    )
    // Every line is a comment or `series value`.
    for (const line of text.trimEnd().split('\n'))
      expect(line).toMatch(/^(# (HELP|TYPE) \w+ .*|[a-zA-Z_:][\w:]*(\{.*\})? [-+\d.eE]+|.* (NaN|[+-]Inf))$/)
  })

  test('queue depths, process figures and event-loop lag are read at scrape time', async () => {
    const { text } = await scrape()
    expect(sample(text, 'jobs_queue_stats_up')).toBe(1)
    expect(sample(text, 'jobs_queue_depth{queue="ingest.process-message",state="ready"}')).toBeNumber()
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(1e6)
    expect(text).toContain('# TYPE process_event_loop_lag_seconds histogram')
  })

  test('the DNS cache hit and miss counters move', async () => {
    const hits = async () => sample((await scrape()).text, 'dns_cache_requests_total{result="hit"}') ?? 0
    const misses = async () => sample((await scrape()).text, 'dns_cache_requests_total{result="miss"}') ?? 0
    const [hit0, miss0] = [await hits(), await misses()]
    await t.runtime.dns.resolve('cached.example', 'TXT')
    await t.runtime.dns.resolve('CACHED.example.', 'TXT')
    await t.runtime.dns.resolve('cached.example', 'TXT')
    expect((await misses()) - miss0).toBe(1)
    expect((await hits()) - hit0).toBe(2)
  })

  test('ingest counts processed, duplicate and quarantined messages and stored reports', async () => {
    await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'ueber.net' } })
    await t.db.database.db.execute(
      sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = 'ueber.net'`,
    )
    const read = async () => {
      const { text } = await scrape()
      return {
        processed: sample(text, 'ingest_messages_total{outcome="processed"}')!,
        duplicate: sample(text, 'ingest_messages_total{outcome="duplicate"}')!,
        quarantined: sample(text, 'ingest_messages_total{outcome="quarantined"}')!,
        aggregate: sample(text, 'ingest_reports_total{kind="aggregate"}')!,
        records: sample(text, 'ingest_aggregate_records_total')!,
      }
    }
    const before = await read()
    const raw = await Bun.file('tests/fixtures/dmarc-aggregate/mox/google.eml').bytes()
    const post = (body: BodyInit) =>
      t.app.handle(
        new Request('http://localhost/api/v1/ingest/messages', {
          method: 'POST',
          headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'message/rfc822' },
          body,
        }),
      )
    expect((await post(raw)).status).toBe(202)
    await until(async () => (await read()).processed === before.processed + 1)
    expect((await read()).aggregate).toBe(before.aggregate + 1)
    expect((await read()).records).toBeGreaterThan(before.records)
    expect((await post(raw)).status).toBe(202)
    await until(async () => (await read()).duplicate === before.duplicate + 1)
    expect((await post('Subject: nothing here\r\n\r\nno report')).status).toBe(202)
    await until(async () => (await read()).quarantined === before.quarantined + 1)
    expect((await read()).aggregate).toBe(before.aggregate + 1)
  })
})

describe("a worker's metrics port", () => {
  const endpoints = (token: string | null, ready = true) =>
    workerEndpoints({ token, boss: null, dns: null, ready: async () => ready })
  const get = (handler: ReturnType<typeof endpoints>, path: string, init: RequestInit = {}) =>
    handler(new Request(`http://localhost${path}`, init))

  test('serves /metrics behind the token, and the health probes', async () => {
    const handler = endpoints(TOKEN)
    expect((await get(handler, '/metrics')).status).toBe(401)
    const metrics = await get(handler, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(metrics.status).toBe(200)
    expect(await metrics.text()).toContain('# TYPE http_requests_total counter')
    expect(await (await get(handler, '/healthz')).json()).toEqual({ status: 'ok' })
    expect(await (await get(handler, '/readyz')).json()).toEqual({ status: 'ready' })
    expect((await get(endpoints(TOKEN, false), '/readyz')).status).toBe(503)
    expect((await get(handler, '/elsewhere')).status).toBe(404)
    expect((await get(handler, '/metrics', { method: 'POST' })).status).toBe(405)
  })

  test('without METRICS_TOKEN /metrics is 404 there too', async () => {
    const handler = endpoints(null)
    expect((await get(handler, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      404,
    )
    expect((await get(handler, '/healthz')).status).toBe(200)
  })
})

describe('configuration', () => {
  test('METRICS_TOKEN must be long enough to resist guessing; METRICS_PORT is a port', async () => {
    const { ConfigError, loadConfig } = await import('../../src/config.ts')
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(ConfigError)
    expect(() => loadConfig({ METRICS_TOKEN: 'sixteen chars ok' })).toThrow(ConfigError)
    const config = loadConfig({ METRICS_TOKEN: TOKEN, METRICS_PORT: '9091' })
    expect(config.metricsToken).toBe(TOKEN)
    expect(config.metricsPort).toBe(9091)
    expect(loadConfig({}).metricsToken).toBeNull()
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(ConfigError)
  })
})
