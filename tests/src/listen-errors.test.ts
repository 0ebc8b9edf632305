import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
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
