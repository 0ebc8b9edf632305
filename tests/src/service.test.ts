import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { getPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDnsPacketResolver } from '../../infrastructure/dns/dns-packet-resolver.ts'
import { runCli, type ServiceProcess, startService } from '../support/processes.ts'

// The README's path on the embedded database: start the service, create an account and a token
// with the CLI while the service runs (through its socket), use the API, stop with SIGTERM.

const dataDir = mkdtempSync(join(tmpdir(), 'dw-svc-'))
let service: ServiceProcess | undefined
afterAll(() => {
  service?.child.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

test('start, CLI while running, API with the token, graceful SIGTERM, CLI after stop', async () => {
  const env = {
    DATA_DIR: dataDir,
    INGEST_DOMAIN: 'reports.example.net',
    SPF_DNS_PORT: '0',
    SPF_DNS_HOST: '127.0.0.1',
  }
  service = await startService(env)
  expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

  // The hosted zone's responder runs with the API: authoritative for spf.<INGEST_DOMAIN>.
  const started = JSON.parse(service.lines.find((l) => l.includes('"dmarcwatch started"'))!)
  const dnsPort = Number(/:(\d+) /.exec(started.dns)![1])
  const zone = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: dnsPort }] })
  expect(await zone.resolve('spf.reports.example.net', 'NS')).toMatchObject({ status: 'ok' })
  expect((await zone.resolve('unknown.spf.reports.example.net', 'TXT')).status).toBe('nxdomain')

  const account = await runCli(['account', 'create', '--email', 'Owner@Example.com'], env)
  expect(account.code).toBe(0)
  const created = JSON.parse(account.stdout)
  expect(created.email).toBe('owner@example.com')
  expect(created.report_address).toMatch(/^r[a-z2-7]{16}@reports\.example\.net$/)

  const token = await runCli(['token', 'create', '--email', 'owner@example.com', '--name', 'ci'], env)
  expect(token.stderr).toBe('')
  expect(token.code).toBe(0)
  expect(token.stdout).toMatch(/^dw_[a-z2-7]{32}\n$/)
  const value = token.stdout.trim()

  const post = await fetch(`${service.url}/api/v1/domains`, {
    method: 'POST',
    headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain_name: 'example.com' }),
  })
  expect(post.status).toBe(201)
  const list = await (
    await fetch(`${service.url}/api/v1/domains`, { headers: { authorization: `Bearer ${value}` } })
  ).json()
  expect(list.meta.total).toBe(1)
  expect((await fetch(`${service.url}/readyz`)).status).toBe(200)

  const listed = await runCli(['token', 'list', '--email', 'owner@example.com'], env)
  expect(JSON.parse(listed.stdout)[0].last_used_at).not.toBeNull()

  const stoppedAt = Date.now()
  service.child.kill('SIGTERM')
  expect(await service.child.exited).toBe(0)
  expect(Date.now() - stoppedAt).toBeLessThan(10_000)
  expect(service.lines.some((line) => line.includes('"msg":"stopped"'))).toBe(true)

  const revoke = await runCli(['token', 'revoke', '--token', value], env)
  expect(revoke.code).toBe(0)
  expect(JSON.parse(revoke.stdout).revoked_at).not.toBeNull()
}, 120_000)

test('ROLE=api and ROLE=worker run apart on one PostgreSQL', async () => {
  const { createPostgresDatabase } = await import('../support/test-db.ts')
  const database = await createPostgresDatabase()
  const env = { DATABASE_URL: database.url }
  // WORKER_NICE lowers the worker's every thread (infrastructure/runtime/process-priority.ts); an
  // API process ignores it, with a warning.
  const worker = await startService({ ...env, ROLE: 'worker', WORKER_NICE: '5' })
  const api = await startService({ ...env, ROLE: 'api', WORKER_NICE: '5' })
  try {
    expect(worker.url).toBe('')
    expect(api.url).toMatch(/^http:\/\//)
    const nices = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => getPriority(Number(tid)))
    expect(new Set(nices(worker.child.pid))).toEqual(new Set([5]))
    expect(new Set(nices(api.child.pid))).toEqual(new Set([0]))
    expect(api.lines.some((line) => line.includes('WORKER_NICE applies to ROLE=worker processes only'))).toBe(
      true,
    )
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200)
    // The worker registered its cron schedules in the shared queue tables.
    const postgres = (await import('postgres')).default
    const sql = postgres(database.url, { max: 1, onnotice: () => {} })
    const schedules = await sql`select name from pgboss.schedule`
    await sql.end()
    expect(schedules.map((row) => row.name)).toContain('maintenance.rate-limit-cleanup')
  } finally {
    api.child.kill('SIGTERM')
    worker.child.kill('SIGTERM')
    expect(await api.child.exited).toBe(0)
    expect(await worker.child.exited).toBe(0)
    await database.drop()
  }
}, 120_000)
