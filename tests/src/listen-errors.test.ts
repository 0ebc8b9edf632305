import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cleanEnv } from '../support/processes.ts'

// A newcomer's start that cannot listen: a port in use or a host that is no address of this machine
// ends the start with one line that names the setting to change, exit code 1, and no stack trace,
// for every listener (src/main.ts listenOrExit). The listeners come before the workers.

const ROOT = new URL('../../', import.meta.url).pathname
const dataDir = mkdtempSync(join(tmpdir(), 'dw-listen-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

async function start(env: Record<string, string>) {
  const child = Bun.spawn(['bun', 'src/main.ts'], {
    cwd: ROOT,
    env: cleanEnv({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  clearTimeout(timer)
  return { code, output: stdout + stderr }
}

function expectOneReason(output: string, reason: string) {
  expect(output).toContain(reason)
  expect(output).not.toContain('    at ')
  expect(output).not.toContain(ROOT)
  expect(output).not.toContain('"dmarcwatch started"')
}

test('a port in use, for the API, the SMTP listener and the DNS responder', async () => {
  const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const udp = await Bun.udpSocket({ hostname: '127.0.0.1', port: 0 })
  try {
    const api = await start({ PORT: String(taken.port) })
    expect(api.code).toBe(1)
    expectOneReason(api.output, `the API's port ${taken.port} is in use by another program or service`)
    expect(api.output).toContain('set PORT to a free port')

    const smtp = await start({ SMTP_PORT: String(taken.port), SMTP_HOST: '127.0.0.1' })
    expect(smtp.code).toBe(1)
    expectOneReason(smtp.output, `the SMTP listener's port ${taken.port} is in use`)
    expect(smtp.output).toContain('set SMTP_PORT to a free port')

    const dns = await start({
      SPF_DNS_PORT: String(udp.port),
      SPF_DNS_HOST: '127.0.0.1',
      SPF_ZONE: 'spf.example.net',
    })
    expect(dns.code).toBe(1)
    expectOneReason(dns.output, `the DNS responder's port ${udp.port} is in use`)
    expect(dns.output).toContain('set SPF_DNS_PORT to a free port')
  } finally {
    taken.stop(true)
    udp.close()
  }
}, 90_000)

test('a host that is no address of this machine', async () => {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
  const api = await start({ HOST: '192.0.2.1' })
  expect(api.code).toBe(1)
  expectOneReason(api.output, 'the API cannot listen on 192.0.2.1')
  expect(api.output).toContain('check HOST')

  const smtp = await start({ SMTP_PORT: '0', SMTP_HOST: '192.0.2.1' })
  expect(smtp.code).toBe(1)
  expectOneReason(smtp.output, 'the SMTP listener cannot listen on 192.0.2.1:0')
  expect(smtp.output).toContain('check SMTP_HOST and SMTP_PORT')
}, 90_000)

test('a database that cannot be opened or reached: one line naming the setting, exit 1', async () => {
  const unreachable = await start({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' })
  expect(unreachable.code).toBe(1)
  expectOneReason(unreachable.output, 'ECONNREFUSED')
  expect(unreachable.output).toContain('check DATABASE_URL')
  const file = join(dataDir, 'a-file')
  writeFileSync(file, '')
  const notADirectory = await start({ DATA_DIR: file })
  expect(notADirectory.code).toBe(1)
  expectOneReason(notADirectory.output, 'cannot open the database')
  expect(notADirectory.output).toContain('check DATA_DIR')
}, 60_000)

test('a service started while a CLI command holds DATA_DIR waits for it, then starts', async () => {
  // What `bun run start` and, a moment later, `bun run cli account create` did: the CLI took the
  // directory first and the service died. A live process stands in for the CLI's hold.
  const dir = join(dataDir, 'held')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const holder = Bun.spawn(['sleep', '30'])
  writeFileSync(join(dir, 'dmarcwatch.lock'), JSON.stringify({ pid: holder.pid, nonce: 'cli', socket: null }))
  const child = Bun.spawn(['bun', 'src/main.ts'], {
    cwd: ROOT,
    env: cleanEnv({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    await Bun.sleep(1500)
    expect(child.exitCode).toBeNull()
    // The CLI is done: its lock is a dead process's now.
    holder.kill()
    await holder.exited
    const reader = child.stdout.getReader()
    let output = ''
    const deadline = Date.now() + 30_000
    while (!output.includes('"dmarcwatch started"') && Date.now() < deadline) {
      const { value, done } = await reader.read()
      if (done) break
      output += new TextDecoder().decode(value)
    }
    expect(output).toContain('"dmarcwatch started"')
  } finally {
    holder.kill()
    child.kill('SIGTERM')
    await child.exited
  }
}, 60_000)
