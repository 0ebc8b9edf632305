import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { aggregateXml, reportEmail } from '../../bench/report-generator.ts'
import { runCli } from '../support/processes.ts'
import { activitySampler, connectionCounter, type Node, startNode, waitUntil } from '../support/scale.ts'
import { createPostgresDatabase } from '../support/test-db.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts'

// Issue #9: nothing assumes a single process. Two ROLE=api and two ROLE=worker processes (real
// `bun src/main.ts` children) on one fresh PostgreSQL database:
//
// 1. A worker SIGKILLed in the middle of a large report loses nothing: the job stays claimed by the
//    dead worker until its pg-boss heartbeat (PROCESS_MESSAGE, heartbeatSeconds in
//    infrastructure/queue/catalogue.ts) lapses; a live worker's supervise pass then fails it into `retry`, and a
//    live worker stores the report, once. A replacement worker is started right after the kill (as
//    an orchestrator would), so the other parts keep running with two workers while this waits.
// 2. 100 report emails, half through each API, are each stored exactly once (one report row, no
//    duplicate seen, one pg-boss job each, run once), and the figures add up to the input.
// 3. 20 webhook test events, half through each API, reach a real receiver exactly once each
//    (X-Webhook-Id), signed; one attempt and one job per delivery.
// 4. The per-token limit is shared: 61 requests in one minute alternating between the APIs give
//    exactly 60 × 200 and then 429, with one consistent X-RateLimit-* sequence across both APIs.
// 5. Crons run once: a worker-scheduled cron that fires every minute (IMAP polling, pointed at a
//    local listener that counts connections) gives one job and one handler run per minute although
//    every worker schedules and monitors crons. pgboss.schedule holding one row per name is checked
//    too, but that is structural (its primary key is (name, key)), not evidence by itself.

const SECRET_KEY = '5c'.repeat(32)
const INGEST_DOMAIN = 'reports.scale.test'
const SMALL_DOMAIN = 'scale.example'
const BIG_DOMAIN = 'big.scale.example'
const BIG_RECORDS = 60_000
const SMALL_REPORTS = 100
const WEBHOOK_EVENTS = 20

let database: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined
let sql: postgres.Sql
let imap: ReturnType<typeof connectionCounter> | undefined
let receiver: WebhookReceiver | undefined
const nodes: Node[] = []
let apis: Node[] = []
let workerEnv: Record<string, string> = {}
let accountId = ''
let reportAddress = ''
const tokens = { rate: '', ingest: ['', ''], ops: '' }
const suiteStarted = Date.now()
const timings: Record<string, string> = {}
const secondsSince = (start: number) => `${((Date.now() - start) / 1000).toFixed(1)} s`

/** Messages (the sum of <count>) in a generated aggregate report. */
function messagesIn(xml: string): number {
  let total = 0
  for (const match of xml.matchAll(/<count>(\d+)<\/count>/g)) total += Number(match[1])
  return total
}

function call(node: Node, token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${node.service.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

function ingest(node: Node, token: string, email: Uint8Array): Promise<Response> {
  return fetch(`${node.service.url}/api/v1/ingest/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'message/rfc822' },
    body: email as BodyInit,
  })
}

/**
 * Workers inside a transaction that has lasted a while on the report tables: a large report is
 * written in one transaction (records by COPY) while the parser streams, so this names its worker.
 */
async function reportWriters(): Promise<string[]> {
  const rows = await sql<{ application_name: string }[]>`
    select distinct application_name from pg_stat_activity
    where datname = current_database() and application_name like 'dw-worker-%'
      and xact_start < now() - interval '300 milliseconds'
      and query ~* 'aggregate_re(ports|cords)'`
  return rows.map((row) => row.application_name)
}

const liveWorkers = () => nodes.filter((node) => node.name.startsWith('dw-worker-') && !node.exited)

beforeAll(async () => {
  database = await createPostgresDatabase()
  sql = postgres(database.url, { max: 4, onnotice: () => {} })
  imap = connectionCounter()
  const common = {
    DATABASE_URL: database.url,
    SECRET_KEY,
    WEBHOOK_ALLOW_PRIVATE: '1',
    INGEST_DOMAIN,
    LOG_LEVEL: 'info',
  }
  workerEnv = {
    ...common,
    ROLE: 'worker',
    IMAP_MAILBOXES: `imap://scale:secret@127.0.0.1:${imap.port}/INBOX`,
  }
  // All four at once: migrations and pg-boss's schema are applied under advisory locks.
  const starting = Date.now()
  const started = await Promise.allSettled([
    startNode('dw-api-1', { ...common, ROLE: 'api' }),
    startNode('dw-api-2', { ...common, ROLE: 'api' }),
    startNode('dw-worker-a', workerEnv),
    startNode('dw-worker-b', workerEnv),
  ])
  for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value)
  for (const result of started) if (result.status === 'rejected') throw result.reason
  apis = nodes.filter((node) => node.name.startsWith('dw-api-'))
  timings['4 processes started'] = secondsSince(starting)

  const cliEnv = { DATABASE_URL: database.url, INGEST_DOMAIN, SECRET_KEY }
  const account = await runCli(['account', 'create', '--email', 'scale@example.com'], cliEnv)
  expect(account.stderr).toBe('')
  const created = JSON.parse(account.stdout)
  accountId = created.account_id
  reportAddress = created.report_address
  const made = await Promise.all(
    ['rate', 'ingest-1', 'ingest-2', 'ops'].map((name) =>
      runCli(['token', 'create', '--email', 'scale@example.com', '--name', name], cliEnv),
    ),
  )
  for (const result of made) expect(result.code).toBe(0)
  const [rate, ingest1, ingest2, ops] = made.map((result) => result.stdout.trim())
  Object.assign(tokens, { rate, ingest: [ingest1, ingest2], ops })
  // Reports act only on verified domains (verification itself is not what this file is about).
  await sql`insert into domains (account_id, name, verification_token, verified_at) values
    (${accountId}, ${SMALL_DOMAIN}, 'x', now()), (${accountId}, ${BIG_DOMAIN}, 'x', now())`
}, 120_000)

afterAll(async () => {
  for (const node of nodes) {
    const stderr = node.stderr.join('').trim()
    if (stderr !== '') console.log(`${node.name} stderr:\n${stderr.slice(0, 4000)}`)
  }
  for (const node of nodes) if (!node.exited) node.service.child.kill('SIGKILL')
  await Promise.all(nodes.map((node) => node.service.child.exited))
  await receiver?.stop()
  imap?.stop()
  await sql?.end()
  await database?.drop()
  console.log(`scale.test timings: ${JSON.stringify({ ...timings, total: secondsSince(suiteStarted) })}`)
})

describe('two API and two worker processes on one database', () => {
  let bigMessageId = ''
  let bigMessages = 0
  let killed = ''
  let killedAt = 0

  test('a worker SIGKILLed in the middle of a large report leaves its job claimed, nothing stored', async () => {
    const xml = aggregateXml({ domain: BIG_DOMAIN, reportId: 'big-1', records: BIG_RECORDS, seed: 99 })
    bigMessages = messagesIn(xml)
    const email = reportEmail({ to: reportAddress, xml, reportId: 'big-1', domain: BIG_DOMAIN })
    const accepted = await ingest(apis[0]!, tokens.ops, email)
    expect(accepted.status).toBe(202)
    bigMessageId = (await accepted.json()).data.id
    const posted = Date.now()

    await waitUntil(
      'the big message job to be claimed',
      async () =>
        (
          await sql`select id from pgboss.job where name = 'ingest.process-message'
            and data->>'messageId' = ${bigMessageId} and state = 'active'`
        )[0],
      30_000,
      25,
    )
    // Which worker holds it: the one writing the report.
    const holders = await waitUntil(
      'a worker inside the big report transaction',
      async () => {
        const writers = await reportWriters()
        return writers.length > 0 ? writers : null
      },
      30_000,
      25,
    )
    expect(holders).toHaveLength(1)
    killed = holders[0]!
    const victim = nodes.find((node) => node.name === killed)!
    victim.service.child.kill('SIGKILL')
    killedAt = Date.now()
    await victim.service.child.exited
    timings['big report posted → its worker killed'] = `${((killedAt - posted) / 1000).toFixed(1)} s`

    // Killed mid-job: its transaction rolled back, the message is still pending and the job still
    // belongs to the dead worker (nothing else may take it before its heartbeat lapses).
    const [message] = await sql`select status from ingest_messages where id = ${bigMessageId}`
    expect(message?.status).toBe('pending')
    const [stored] = await sql`select count(*)::int as n from aggregate_reports where report_id = 'big-1'`
    expect(stored?.n).toBe(0)
    const [job] = await sql`select state, heartbeat_seconds from pgboss.job
      where name = 'ingest.process-message' and data->>'messageId' = ${bigMessageId}`
    expect(job?.state).toBe('active')
    // Without a heartbeat the job would wait out its 15-minute expiry (infrastructure/queue/catalogue.ts).
    expect(job?.heartbeat_seconds ?? 0).toBeGreaterThan(0)

    // As an orchestrator would: a replacement, so two workers keep running for the other parts.
    const replacement = Date.now()
    nodes.push(await startNode('dw-worker-c', workerEnv))
    timings['replacement worker started'] = secondsSince(replacement)
    expect(liveWorkers()).toHaveLength(2)
  }, 90_000)

  test('100 report emails through both APIs are each stored exactly once', async () => {
    let expectedMessages = 0
    let expectedRecords = 0
    const emails = Array.from({ length: SMALL_REPORTS }, (_, i) => {
      const reportId = `scale-${i}`
      const records = 1 + (i % 20)
      const xml = aggregateXml({ domain: SMALL_DOMAIN, reportId, records, seed: 1000 + i })
      expectedMessages += messagesIn(xml)
      expectedRecords += records
      return reportEmail({ to: reportAddress, xml, reportId, domain: SMALL_DOMAIN })
    })
    // Who stores reports: the workers' statements on the report tables, sampled while they run.
    const sampler = activitySampler(sql, 'insert into .?aggregate_reports|update .?ingest_messages')
    const started = Date.now()
    const ids: string[] = []
    const statuses: number[] = []
    let next = 0
    // Eight connections at once; email i goes to API i % 2 with a token that stays under its limit.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < emails.length) {
          const i = next++
          const response = await ingest(apis[i % 2]!, tokens.ingest[Math.floor(i / 2) % 2]!, emails[i]!)
          statuses.push(response.status)
          if (response.status === 202) ids.push((await response.json()).data.id)
        }
      }),
    )
    expect(statuses.filter((status) => status !== 202)).toEqual([])
    expect(new Set(ids).size).toBe(SMALL_REPORTS)

    await waitUntil(
      'the 100 messages to be processed',
      async () => {
        const [row] = await sql`select count(*)::int as n from ingest_messages
          where id = any(${ids}) and status = 'pending'`
        return row?.n === 0
      },
      90_000,
    )
    timings['100 reports: first post → all processed'] = secondsSince(started)
    await sampler.stop()
    timings['report statements sampled per process'] = JSON.stringify(Object.fromEntries(sampler.seen))

    const messages = await sql`select status, count(*)::int as n from ingest_messages
      where id = any(${ids}) group by status`
    expect(messages.map((row) => ({ ...row }))).toEqual([{ status: 'processed', n: SMALL_REPORTS }])

    const reports = await sql`select report_id, duplicates_seen, record_count, message_count, message_id
      from aggregate_reports where policy_domain = ${SMALL_DOMAIN}`
    expect(reports).toHaveLength(SMALL_REPORTS)
    expect(new Set(reports.map((row) => row.report_id)).size).toBe(SMALL_REPORTS)
    expect(new Set(reports.map((row) => row.message_id)).size).toBe(SMALL_REPORTS)
    expect(reports.filter((row) => row.duplicates_seen !== 0)).toEqual([])
    expect(reports.reduce((sum, row) => sum + Number(row.message_count), 0)).toBe(expectedMessages)
    expect(reports.reduce((sum, row) => sum + row.record_count, 0)).toBe(expectedRecords)

    // The rows and rollups behind the reports add up to the input: nothing written twice.
    const [records] = await sql`select count(*)::int as rows, sum(r.count)::bigint as messages
      from aggregate_records r join aggregate_reports a on a.id = r.report_id
      where a.policy_domain = ${SMALL_DOMAIN}`
    expect(records?.rows).toBe(expectedRecords)
    expect(Number(records?.messages)).toBe(expectedMessages)
    const [totals] = await sql`select sum(t.messages)::bigint as messages, sum(t.reports)::int as reports
      from daily_domain_totals t join domains d on d.id = t.domain_id where d.name = ${SMALL_DOMAIN}`
    expect(Number(totals?.messages)).toBe(expectedMessages)
    expect(totals?.reports).toBe(SMALL_REPORTS)

    // pg-boss handed each message's job out once: one job per message, completed, never retried
    // (a second claim of a job increments retry_count).
    const jobs = await sql`select data->>'messageId' as message_id, state, retry_count from pgboss.job
      where name = 'ingest.process-message' and data->>'messageId' = any(${ids})`
    expect(jobs).toHaveLength(SMALL_REPORTS)
    expect(new Set(jobs.map((row) => row.message_id)).size).toBe(SMALL_REPORTS)
    expect(jobs.filter((row) => row.state !== 'completed' || row.retry_count !== 0)).toEqual([])
  }, 150_000)

  test('20 webhook events through both APIs reach the receiver exactly once each, signed', async () => {
    // The first save creates the secret; the receiver has to know it before anything is delivered.
    const placeholder = await call(apis[0]!, tokens.ops, 'PUT', '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/placeholder',
    })
    expect(placeholder.status).toBe(200)
    const secret: string = (await placeholder.json()).data.secret
    receiver = startWebhookReceiver({ secret })
    const saved = await call(apis[1]!, tokens.ops, 'PUT', '/api/v1/webhooks', { url: receiver.url })
    expect(saved.status).toBe(200)
    expect((await saved.json()).data.secret).toBe(secret)

    const started = Date.now()
    const answers = await Promise.all(
      Array.from({ length: WEBHOOK_EVENTS }, (_, i) =>
        call(apis[i % 2]!, tokens.ops, 'POST', '/api/v1/webhooks/test'),
      ),
    )
    expect(answers.map((answer) => answer.status)).toEqual(Array(WEBHOOK_EVENTS).fill(202))
    const ids: string[] = await Promise.all(answers.map(async (answer) => (await answer.json()).data.id))
    expect(new Set(ids).size).toBe(WEBHOOK_EVENTS)

    await waitUntil(
      'every delivery to be delivered',
      async () => {
        const [row] = await sql`select count(*)::int as n from webhook_deliveries
          where id = any(${ids}) and status = 'delivered'`
        return row?.n === WEBHOOK_EVENTS && receiver!.arrivals.length >= WEBHOOK_EVENTS
      },
      60_000,
    )
    timings['20 webhooks: requests → all delivered'] = secondsSince(started)
    // Both relays poll the outbox every 500 ms: a second copy would arrive well within this.
    await Bun.sleep(2_000)

    // The pings sent here; alerts raised meanwhile by the reports above (their rules run as soon as
    // a report is stored, docs/alerts.md) reach the same receiver and are not counted.
    const pings = receiver.arrivals.filter((arrival) => ids.includes(arrival.headers['x-webhook-id'] ?? ''))
    const arrived = pings.map((arrival) => arrival.headers['x-webhook-id'])
    expect(arrived).toHaveLength(WEBHOOK_EVENTS)
    expect([...arrived].sort()).toEqual([...ids].sort())
    expect(receiver.arrivals.filter((arrival) => !arrival.verified)).toEqual([])
    expect(new Set(pings.map((arrival) => arrival.headers['x-webhook-event']))).toEqual(new Set(['ping']))

    const attempts = await sql`select delivery_id, count(*)::int as n from webhook_attempts
      where delivery_id = any(${ids}) group by delivery_id`
    expect(attempts).toHaveLength(WEBHOOK_EVENTS)
    expect(attempts.filter((row) => row.n !== 1)).toEqual([])
    const jobs = await sql`select data->>'deliveryId' as delivery_id, state, retry_count from pgboss.job
      where name = 'webhooks.deliver' and data->>'deliveryId' = any(${ids})`
    expect(jobs).toHaveLength(WEBHOOK_EVENTS)
    expect(jobs.filter((row) => row.state !== 'completed' || row.retry_count !== 0)).toEqual([])

    // Which worker sent what, from their own logs: each delivery by exactly one process.
    const senders = new Map<string, string[]>()
    for (const node of nodes.filter((n) => n.name.startsWith('dw-worker-'))) {
      for (const line of node.logs()) {
        if (line.msg !== 'webhook attempt' || !ids.includes(line.delivery_id as string)) continue
        senders.set(line.delivery_id as string, [
          ...(senders.get(line.delivery_id as string) ?? []),
          node.name,
        ])
      }
    }
    expect([...senders.values()].filter((names) => names.length !== 1)).toEqual([])
    expect(senders.size).toBe(WEBHOOK_EVENTS)
    const perWorker: Record<string, number> = {}
    for (const [name] of senders.values()) perWorker[name!] = (perWorker[name!] ?? 0) + 1
    timings['webhook attempts per worker'] = JSON.stringify(perWorker)
  }, 90_000)

  test('the per-token limit is shared: the 61st request in a minute across both APIs gets 429', async () => {
    // Fixed calendar minutes: start with at least 20 s left in this one.
    const secondsIntoMinute = (Date.now() / 1000) % 60
    if (secondsIntoMinute > 40) await Bun.sleep((60 - secondsIntoMinute) * 1000 + 250)
    const windowEnd = Math.floor(Date.now() / 60_000) * 60 + 60
    const started = Date.now()
    const answers: { status: number; api: string; limit: string; remaining: string; reset: string }[] = []
    for (let i = 0; i < 61; i++) {
      const api = apis[i % 2]!
      const response = await call(api, tokens.rate, 'GET', '/api/v1/domains')
      await response.arrayBuffer()
      answers.push({
        status: response.status,
        api: api.name,
        limit: response.headers.get('x-ratelimit-limit') ?? '',
        remaining: response.headers.get('x-ratelimit-remaining') ?? '',
        reset: response.headers.get('x-ratelimit-reset') ?? '',
      })
      if (i === 60) {
        const retryAfter = Number(response.headers.get('retry-after'))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(60)
      }
    }
    timings['61 requests'] = secondsSince(started)
    expect(Math.floor(Date.now() / 1000)).toBeLessThan(windowEnd)
    expect(answers.slice(0, 60).map((a) => a.status)).toEqual(Array(60).fill(200))
    expect(answers[60]!.status).toBe(429)
    expect(answers[60]!.api).toBe('dw-api-1')
    // One counter behind both APIs: remaining counts down 59 … 0 across them, then stays 0.
    expect(answers.map((a) => a.remaining)).toEqual([
      ...Array.from({ length: 60 }, (_, i) => String(59 - i)),
      '0',
    ])
    expect(new Set(answers.map((a) => a.limit))).toEqual(new Set(['60']))
    expect(new Set(answers.map((a) => a.reset))).toEqual(new Set([String(windowEnd)]))
  }, 60_000)

  test("the killed worker's report is stored exactly once, by a live worker after its heartbeat lapses", async () => {
    expect(killed).not.toBe('')
    let retriedBy: string | undefined
    const processed = await waitUntil(
      'the killed worker’s message to be processed',
      async () => {
        retriedBy ??= (await reportWriters())[0]
        const [row] = await sql`select status from ingest_messages where id = ${bigMessageId}`
        return row?.status === 'pending' ? null : row
      },
      240_000,
      100,
    )
    timings['kill → killed worker’s report stored'] = secondsSince(killedAt)
    expect(processed.status).toBe('processed')
    if (retriedBy !== undefined) {
      expect(retriedBy).not.toBe(killed)
      timings['retried by'] = retriedBy
    }

    // One job, failed once by the heartbeat monitor and claimed again: retry_count 1. pg-boss marks
    // it completed just after the handler's transaction commits, so it may still read `active`.
    const jobs = await waitUntil(
      'the retried job to be completed',
      async () => {
        const rows = await sql`select state, retry_count, started_on from pgboss.job
          where name = 'ingest.process-message' and data->>'messageId' = ${bigMessageId}`
        return rows.length === 1 && rows[0]?.state === 'active' ? null : rows
      },
      30_000,
      100,
    )
    expect(jobs).toHaveLength(1)
    expect(jobs[0]?.state).toBe('completed')
    expect(jobs[0]?.retry_count).toBe(1)
    timings['kill → retry claimed'] = `${((jobs[0]!.started_on.getTime() - killedAt) / 1000).toFixed(1)} s`

    const reports = await sql`select id, duplicates_seen, record_count, message_count from aggregate_reports
      where report_id = 'big-1'`
    expect(reports).toHaveLength(1)
    expect(reports[0]?.duplicates_seen).toBe(0)
    expect(reports[0]?.record_count).toBe(BIG_RECORDS)
    expect(Number(reports[0]?.message_count)).toBe(bigMessages)
    const [records] = await sql`select count(*)::int as rows, sum(count)::bigint as messages
      from aggregate_records where report_id = ${reports[0]!.id}`
    expect(records?.rows).toBe(BIG_RECORDS)
    expect(Number(records?.messages)).toBe(bigMessages)
    const [totals] = await sql`select sum(t.messages)::bigint as messages, sum(t.reports)::int as reports
      from daily_domain_totals t join domains d on d.id = t.domain_id where d.name = ${BIG_DOMAIN}`
    expect(Number(totals?.messages)).toBe(bigMessages)
    expect(totals?.reports).toBe(1)
  }, 300_000)

  test('crons run once per tick although every worker schedules them', async () => {
    // One row per schedule name: structural (primary key (name, key)), checked for completeness.
    const schedules = await sql`select name, count(*)::int as n from pgboss.schedule group by name`
    expect(schedules.map((row) => row.name)).toContain('ingest.poll-mailboxes')
    expect(schedules.map((row) => row.name)).toContain('maintenance.rate-limit-cleanup')
    expect(schedules.filter((row) => row.n !== 1)).toEqual([])

    // The every-minute cron: wait for two ticks at least (the suite usually has seen them by now).
    const polls = async () =>
      sql<{ created_on: Date; state: string }[]>`select created_on, state from pgboss.job
        where name = 'ingest.poll-mailboxes' order by created_on`
    await waitUntil('two mailbox poll ticks', async () => (await polls()).length >= 2, 130_000, 1000)
    // Four views of the ticks, read when they agree (a tick can land between two reads, and a
    // forwarded occurrence becomes its job a few seconds later); compared one by one below.
    const snapshot = async () => ({
      jobs: await polls(),
      // pg-boss's record: each cron pass forwards the minute's occurrence as a send-it job filed
      // under its slot (deduplicated by a singleton on that slot).
      slots: await sql<{ slot: string | null; n: number }[]>`select data->>'slot' as slot,
        count(*)::int as n from pgboss.job
        where name = '__pgboss__send-it' and data->>'name' = 'ingest.poll-mailboxes' group by 1`,
      // Handler runs, from outside (connections to the IMAP listener) and from the logs of every
      // worker that ever ran (the killed one included).
      connections: imap!.at.length,
      runs: nodes.flatMap((node) =>
        node
          .logs()
          .filter((line) => line.msg === 'mailbox polled')
          .map(() => node.name),
      ),
    })
    let seen = await snapshot()
    const agree = () =>
      seen.jobs.every((job) => job.state === 'completed') &&
      [seen.slots.length, seen.connections, seen.runs.length].every((n) => n === seen.jobs.length)
    for (let i = 0; i < 30 && !agree(); i++) {
      await Bun.sleep(1000)
      seen = await snapshot()
    }
    const { jobs, slots, connections, runs } = seen
    expect(jobs.filter((job) => job.state !== 'completed')).toEqual([])
    // One forwarded occurrence per slot, and one job per occurrence.
    expect(slots.filter((row) => row.n !== 1 || row.slot === null)).toEqual([])
    expect(slots).toHaveLength(jobs.length)
    // Not one job per worker per tick: at most one per minute since the workers started.
    expect(jobs.length).toBeLessThanOrEqual(Math.ceil((Date.now() - suiteStarted) / 60_000) + 1)
    // One handler run per job.
    expect(connections).toBe(jobs.length)
    expect(runs).toHaveLength(jobs.length)
    timings['mailbox cron ticks'] = `${jobs.length}, run by ${JSON.stringify(runs)}`
  }, 200_000)
})
