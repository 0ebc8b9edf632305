import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/free-port.ts'
import { runCli, type ServiceProcess, startService } from '../support/processes.ts'
import { createPostgresDatabase } from '../support/test-db.ts'

// Concurrent uploads on /reports/upload cost the service a bounded amount of memory, whatever
// their size (docs/ingestion.md, "Memory"): found by a hostile-input sweep, four concurrent 63 MB
// uploads took the service from 237 to 746 MB (each body was held twice: read whole, then parsed
// whole into a FormData), eight to 1,067 MB. Measured on a real service process, as
// bench/ingest-memory.ts measures the intake: the kernel's high-water mark (VmHWM), reset just before.

const MiB = 1024 * 1024
// The figures are the kernel's (/proc/PID/status, clear_refs): Linux only, as the project runs
// (Debian, .ci/run). Elsewhere the test fails with that reason rather than skipping silently.
const PROC_MEMORY = '/proc/self/clear_refs'
let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let service: ServiceProcess
let spoolDir: string

const PASSWORD = 'correct horse battery staple'

beforeAll(async () => {
  if (!existsSync(PROC_MEMORY))
    throw new Error(`${PROC_MEMORY} is missing: this test reads the Linux kernel's memory figures`)
  database = await createPostgresDatabase()
  spoolDir = mkdtempSync(join(tmpdir(), 'dw-upload-spool-'))
  // PORT fixed up front: the dashboard's forms check Origin against PUBLIC_URL, built from it.
  const env = {
    DATABASE_URL: database.url,
    PORT: String(await freePort()),
    RATE_LIMIT_LOGIN_PER_MINUTE: '1000',
    TMPDIR: spoolDir,
  }
  expect((await runCli(['migrate'], env)).code).toBe(0)
  const created = await runCli(
    ['account', 'create', '--email', 'mem@example.org', '--password-stdin'],
    env,
    `${PASSWORD}\n`,
  )
  expect(created.code).toBe(0)
  service = await startService(env)
}, 90_000)
afterAll(async () => {
  service?.child.kill()
  await service?.child.exited
  if (spoolDir) rmSync(spoolDir, { recursive: true, force: true })
  await database?.drop()
})

/** Signs in through the login form; the session's cookies and the upload form's CSRF token. */
async function signIn(base: string) {
  const jar = new Map<string, string>()
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    headers.set('origin', base)
    headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '))
    const response = await fetch(`${base}${path}`, { ...init, headers, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(';')[0]!
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1))
    }
    return response
  }
  const csrfOf = async (response: Response) => /name="_csrf" value="([^"]+)"/.exec(await response.text())![1]!
  const body = new URLSearchParams({
    _csrf: await csrfOf(await send('/login')),
    email: 'mem@example.org',
    password: PASSWORD,
  })
  const login = await send('/login', {
    method: 'POST',
    body: body.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  expect(login.status).toBe(303)
  return { send, token: await csrfOf(await send('/reports/upload')) }
}

const memory = async (pid: number) => {
  const status = await Bun.file(`/proc/${pid}/status`).text()
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)![1]) * 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

test('four concurrent 63 MB uploads grow the service by less than two of them held whole', async () => {
  const { send, token } = await signIn(`http://localhost:${new URL(service.url).port}`)
  const file = new Blob([new Uint8Array(63 * MiB).fill(0x20)])
  const pid = service.child.pid
  await Bun.write(`/proc/${pid}/clear_refs`, '5')
  const before = await memory(pid)
  const answers = await Promise.all(
    Array.from({ length: 4 }, async () => {
      const form = new FormData()
      form.append('_csrf', token)
      form.append('files', file, 'blank.bin')
      const response = await send('/reports/upload', {
        method: 'POST',
        body: form,
        headers: { accept: 'application/json' },
      })
      return { status: response.status, items: (await response.json()).data.items }
    }),
  )
  const growth = (await memory(pid)).peak - before.rss
  for (const answer of answers) {
    expect(answer).toEqual({
      status: 200,
      items: [{ status: 'skipped', label: 'blank.bin', detail: 'not a report file, an email or an mbox' }],
    })
  }
  // Each upload is spooled (a MiB in memory, the rest in TMPDIR): measured 0-42 MB (garbage the
  // next collection takes), where the bodies held whole cost 510 MB here. Two bodies held at once
  // would pass the bound.
  expect(growth).toBeLessThan(100 * MiB)
}, 90_000)
