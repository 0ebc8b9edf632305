import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import type { Logger } from '../../domain/shared/logger.ts'
import { ok } from '../../domain/shared/result.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { jsonLogger } from '../../infrastructure/logging/json-logger.ts'
import { serveIntakeSocket } from '../../infrastructure/mail/intake-socket.ts'
import { serverErrorOptions } from '../../plugins/errors.ts'
import { BAD_HOST_MESSAGE } from '../../plugins/request-id.ts'
import { workerEndpoints } from '../../src/routes/metrics.ts'
import { listenOnLoopback, startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'

// A request whose Host header is missing (HTTP/1.0) or names no host has no URL: `new URL()` of it
// threw, a 500 on every route of the API (and a log line with a stack each), and on the worker's
// metrics port and the intake socket Bun's development error page with the stack and the source
// paths. Each listener answers 400 now (RFC 9112 §3.2). Raw bytes over real sockets: no client
// library sends such a request.

let t: TestApp
let owner: TestAccount
let port: number
let stop: () => void

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' })
  owner = await t.account()
  const listening = listenOnLoopback(t.app)
  stop = listening.stop
  port = Number(new URL(listening.base).port)
})
afterAll(async () => {
  stop?.()
  await t?.close()
})

/** Sends `head` (and `body`) as they are; the whole answer, once the server has closed. */
function raw(target: { port: number } | { unix: string }, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = 'unix' in target ? connect(target.unix) : connect(target.port, '127.0.0.1')
    let answer = ''
    socket.on('data', (data) => {
      answer += data.toString('latin1')
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(answer))
    socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`)
    setTimeout(() => socket.destroy(), 5000)
  })
}

const statusOf = (answer: string) => Number(answer.slice(9, 12))
const bodyOf = (answer: string) =>
  Buffer.from(answer.slice(answer.indexOf('\r\n\r\n') + 4), 'latin1').toString('utf8')

const BAD_HOSTS = ['', 'a b', '[::1', 'x:99999', 'x:abc', 'x/y', 'x?y', 'x@y', 'x\\y', 'x<y', 'x|y']

test('the API: 400 in the validation format, with the request id, for every bad Host', async () => {
  const auth = `Authorization: Bearer ${owner.token}`
  const answers = [
    await raw({ port }, `GET /api/v1/domains HTTP/1.0\r\n${auth}`),
    ...(await Promise.all(
      BAD_HOSTS.map((host) => raw({ port }, `GET /api/v1/domains HTTP/1.1\r\nHost: ${host}\r\n${auth}`)),
    )),
  ]
  for (const answer of answers) {
    expect(statusOf(answer)).toBe(400)
    expect(answer.toLowerCase()).toContain('x-request-id: ')
    expect(JSON.parse(bodyOf(answer))).toEqual({
      message: BAD_HOST_MESSAGE,
      errors: { host: [BAD_HOST_MESSAGE] },
    })
  }
  expect(t.logs.some((line) => line.includes('unexpected error'))).toBe(false)
})

test('health, the dashboard and the intake: 400, and nothing stored', async () => {
  expect(statusOf(await raw({ port }, 'GET /healthz HTTP/1.0'))).toBe(400)
  const page = await raw({ port }, 'GET /login HTTP/1.1\r\nHost: a b\r\nAccept: text/html')
  expect(statusOf(page)).toBe(400)
  expect(page).not.toContain('    at ')
  const message = 'From: a@example.net\r\nSubject: x\r\n\r\nbody\r\n'
  const intake = await raw(
    { port },
    `POST /api/v1/ingest/messages?recipient=x@example.com HTTP/1.1\r\nHost: a b\r\nAuthorization: Bearer ${owner.token}\r\nContent-Length: ${message.length}`,
    message,
  )
  expect(statusOf(intake)).toBe(400)
  const [stored] = rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from ingest_messages where account_id = ${owner.accountId}`,
    ),
  )
  expect(stored!.n).toBe(0)
})

test('a dashboard page answered with its own 400 or 404 page is logged with that status', async () => {
  const base = `http://127.0.0.1:${port}`
  const refused = await fetch(`${base}/login?next=%00`, { headers: { accept: 'text/html' } })
  expect(refused.status).toBe(400)
  const missing = await fetch(`${base}/no-such-page`, { headers: { accept: 'text/html' } })
  expect(missing.status).toBe(404)
  // The line is written once the answer has gone out.
  const logged = (id: string | null) =>
    until(
      async () =>
        t.logs
          .map((line) => JSON.parse(line))
          .find((line) => line.msg === 'request' && line.request_id === id),
      (line) => line !== undefined,
    )
  expect((await logged(refused.headers.get('x-request-id'))).status).toBe(400)
  expect((await logged(missing.headers.get('x-request-id'))).status).toBe(404)
})

test('the worker’s metrics port and the intake socket: a 400, never Bun’s error page', async () => {
  const lines: string[] = []
  const logger = jsonLogger('info', (line) => lines.push(line))
  const metrics = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    ...serverErrorOptions(logger),
    fetch: workerEndpoints({ token: 't'.repeat(32), boss: null, dns: null, ready: async () => true }),
  })
  const dir = mkdtempSync(join(tmpdir(), 'dw-host-'))
  const quiet = Object.fromEntries(
    ['debug', 'info', 'warn', 'error'].map((l) => [l, () => {}]),
  ) as unknown as Logger
  const intake = await serveIntakeSocket(
    { accept: async () => ok({ id: 'm1', accountId: 'a1' }), logger: quiet },
    { path: join(dir, 'intake.sock'), maxMessageBytes: 4096 },
  )
  try {
    for (const answer of [
      await raw({ port: metrics.port! }, 'GET /healthz HTTP/1.0'),
      await raw({ port: metrics.port! }, 'GET /metrics HTTP/1.1\r\nHost: a b'),
      await raw({ unix: join(dir, 'intake.sock') }, 'GET / HTTP/1.0'),
      await raw(
        { unix: join(dir, 'intake.sock') },
        'POST /messages HTTP/1.1\r\nHost: a b\r\nContent-Length: 0',
      ),
    ]) {
      expect(statusOf(answer)).toBe(400)
      expect(answer).not.toContain('text/html')
      expect(answer).not.toContain(process.cwd())
    }
  } finally {
    metrics.stop(true)
    await intake.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
