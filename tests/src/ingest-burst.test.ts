import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { openEmbedded } from '../../infrastructure/db/embedded.ts'
import { cleanEnv, runCli, type ServiceProcess, startService } from '../support/processes.ts'

// The mail server's pipe under a burst, on the embedded database (docs/ingestion.md, "The CLI
// pipe"): 30 `cli ingest` processes at once (20 handed to the service over its intake socket, 10
// with their own session on the database socket), while 10 other clients of the database socket
// take PGlite's lock — inside a transaction, or mid extended-query — and are killed with SIGKILL.
// Afterwards every accepted message is stored exactly once, nothing the killed clients wrote is
// kept, the API answers, and a new CLI call succeeds.

const ROOT = new URL('../../', import.meta.url).pathname
const dataDir = mkdtempSync(join(tmpdir(), 'dw-burst-'))
const children: Subprocess[] = []
let service: ServiceProcess | undefined
afterAll(() => {
  for (const child of children) child.kill('SIGKILL')
  service?.child.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

const env = {
  DATA_DIR: dataDir,
  INGEST_DOMAIN: 'reports.example.net',
  SPF_DNS_PORT: '0',
  SPF_DNS_HOST: '127.0.0.1',
}

/** A socket client that takes the lock; resolves once it holds it (tests/support/socket-victim.ts). */
async function victim(mode: 'transaction' | 'extended', label: string): Promise<Subprocess> {
  const child = Bun.spawn(
    ['bun', 'tests/support/socket-victim.ts', join(dataDir, '.s.PGSQL.5432'), mode, label],
    { cwd: ROOT, env: cleanEnv({}), stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' },
  )
  children.push(child)
  const reader = child.stdout.getReader()
  let out = ''
  while (!out.includes('holding')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`victim ${label} exited before holding the lock`)
    out += new TextDecoder().decode(value)
  }
  return child
}

test('30 concurrent cli ingest and 10 SIGKILLed socket clients: each accepted message stored once', async () => {
  const started = Date.now()
  const mark = (what: string) => console.log(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`)
  service = await startService(env)
  const account = await runCli(['account', 'create', '--email', 'burst@example.com'], env)
  expect(account.stderr).toBe('')
  const address: string = JSON.parse(account.stdout).report_address
  const token = (
    await runCli(['token', 'create', '--email', 'burst@example.com', '--name', 'b'], env)
  ).stdout.trim()
  expect(token).toMatch(/^dw_/)
  expect(service.lines.some((l) => l.includes('intake.sock'))).toBe(true)

  mark('service, account and token')
  const peer = await openEmbedded({ dataDir, serveSocket: false })
  if (peer.kind !== 'postgres') throw new Error('expected the service to hold DATA_DIR')
  await peer.client`create table stress_probe (v text)`

  // While a killed-to-be client holds the lock, /readyz says so within its 2 s budget.
  const first = await victim('transaction', 'victim-0')
  const probeAt = performance.now()
  expect((await fetch(`${service.url}/readyz`)).status).toBe(503)
  expect(performance.now() - probeAt).toBeLessThan(3_500)
  first.kill('SIGKILL')

  mark('readyz 503 under a held lock')
  const raw = await Bun.file('tests/fixtures/dmarc-aggregate/mox/google.eml').text()
  const ingests = Array.from({ length: 30 }, (_, i) =>
    runCli(
      ['ingest', '--recipient', address, ...(i % 3 === 2 ? ['--direct'] : [])],
      env,
      `X-Burst-Sequence: ${i}\r\n${raw}`,
    ),
  )
  // Nine more lock holders among the burst, each killed 150 ms after it got the lock.
  const victims = Array.from({ length: 9 }, async (_, i) => {
    await Bun.sleep(100 * i)
    const child = await victim(i % 2 === 0 ? 'extended' : 'transaction', `victim-${i + 1}`)
    await Bun.sleep(150)
    child.kill('SIGKILL')
  })
  await Promise.all(victims)
  mark('victims killed')
  const results = await Promise.all(ingests)
  mark('burst done')
  for (const result of results)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  const ids = results.map((r) => JSON.parse(r.stdout).id as string)
  expect(new Set(ids).size).toBe(30)

  const stored = await peer.client<{ id: string; sha256: string }[]>`select id, sha256 from ingest_messages`
  expect(stored.map((row) => row.id).sort()).toEqual([...ids].sort())
  expect(new Set(stored.map((row) => row.sha256)).size).toBe(30)
  // Each with its one processing job, committed with it.
  const jobs = await peer.client<{ id: string }[]>`select data->>'messageId' as id from pgboss.job
    where name = 'ingest.process-message'`
  expect(jobs.map((job) => job.id).sort()).toEqual([...ids].sort())
  expect([...(await peer.client`select v from stress_probe`)]).toEqual([])
  await peer.close()

  expect((await fetch(`${service.url}/readyz`)).status).toBe(200)
  const api = await fetch(`${service.url}/api/v1/ingest/address`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(api.status).toBe(200)
  const after = await runCli(['token', 'list', '--email', 'burst@example.com'], env)
  expect(after.code).toBe(0)
  expect(JSON.parse(after.stdout)).toHaveLength(1)

  // Refused by the service: exit 1 (the mail server bounces), the same line as without a service.
  const refused = await runCli(['ingest', '--recipient', 'nobody@reports.example.net'], env, raw)
  expect({ code: refused.code, stderr: refused.stderr.trim() }).toEqual({
    code: 1,
    stderr: 'not accepted: nobody@reports.example.net is not a report address of this service',
  })

  // Stopping while a socket client holds the lock inside a transaction: the client is cut off and
  // rolled back, and the service stops cleanly within its shutdown budget (10 s).
  await victim('transaction', 'victim-at-shutdown')
  const stoppingAt = Date.now()
  service.child.kill('SIGTERM')
  expect(await service.child.exited).toBe(0)
  expect(Date.now() - stoppingAt).toBeLessThan(9_000)
  // No service: the socket is gone and the CLI stores the message with its own session.
  expect(existsSync(join(dataDir, 'intake.sock'))).toBe(false)
  const alone = await runCli(['ingest', '--recipient', address], env, `X-Burst-Sequence: alone\r\n${raw}`)
  expect({ code: alone.code, stderr: alone.stderr }).toEqual({ code: 0, stderr: '' })
  const owner = await openEmbedded({ dataDir, serveSocket: false })
  if (owner.kind !== 'pglite') throw new Error('expected to open DATA_DIR directly')
  expect((await owner.pglite.query('select v from stress_probe')).rows).toEqual([])
  expect(
    (await owner.pglite.query<{ n: number }>('select count(*)::int as n from ingest_messages')).rows[0]!.n,
  ).toBe(31)
  await owner.close()
  console.log(`burst test: ${((Date.now() - started) / 1000).toFixed(1)} s`)
}, 120_000)
