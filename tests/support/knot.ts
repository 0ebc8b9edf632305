// A private Knot DNS server per test file: the second RFC 2136 implementation the DNS provider
// adapter is tested against (PowerDNS is the first, tests/support/powerdns.ts). Config, zone files,
// journal, timer database and control socket live in one temp dir; knotd runs in the foreground as
// a child process on a free loopback port, and /etc/knot or any system instance is never touched.
// CI installs the Debian package `knot` (.ci/run).

import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TsigKey } from '../../infrastructure/dns-providers/tsig.ts'
import { accepts, freePort } from './free-port.ts'
import { startServerProcess } from './server-process.ts'

export interface KnotServer {
  /** DNS over UDP and TCP on 127.0.0.1. */
  dnsPort: number
  /** Allowed to update and transfer every zone. */
  key: TsigKey
  /** Known to the server but in no ACL: its updates are refused. */
  otherKey: TsigKey
  /** Runs knotc against this server's control socket; returns its stdout. */
  knotc(...args: string[]): Promise<string>
  stop(): Promise<void>
}

export interface KnotZone {
  name: string
  /** Extra zone-file lines after the SOA and NS (relative names are in the zone). */
  records?: string[]
}

const INSTALL = 'apt-get install knot'

function binaries(): { server: string; control: string } | null {
  const server = Bun.which('knotd') ?? ['/usr/sbin/knotd'].find(existsSync)
  const control = Bun.which('knotc') ?? ['/usr/sbin/knotc'].find(existsSync)
  return server && control ? { server, control } : null
}

const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')

function config(dir: string, port: number, keys: TsigKey[], zones: KnotZone[]): string {
  const quoted = (path: string) => JSON.stringify(path)
  return [
    'server:',
    `    rundir: ${quoted(dir)}`,
    `    pidfile: ${quoted(join(dir, 'knot.pid'))}`,
    `    listen: 127.0.0.1@${port}`,
    '    udp-workers: 1',
    '    tcp-workers: 1',
    '    background-workers: 1',
    'log:',
    '  - target: stderr',
    '    any: info',
    'database:',
    `    storage: ${quoted(dir)}`,
    'control:',
    `    listen: ${quoted(join(dir, 'knot.sock'))}`,
    'key:',
    ...keys.flatMap((key) => [
      `  - id: ${key.name}`,
      `    algorithm: ${key.algorithm}`,
      `    secret: ${key.secret}`,
    ]),
    // Updates and transfers from loopback, and only with the first key: the second is known (its
    // signatures verify) but allowed nothing.
    'acl:',
    '  - id: update',
    '    address: 127.0.0.0/8',
    `    key: ${keys[0]!.name}`,
    '    action: [update, transfer]',
    'template:',
    '  - id: default',
    `    storage: ${quoted(dir)}`,
    '    file: "%s.zone"',
    // Changes stay in the journal; the zone files written here are never rewritten.
    '    zonefile-sync: -1',
    '    journal-content: changes',
    '    acl: update',
    'zone:',
    ...zones.map((zone) => `  - domain: ${zone.name}`),
    '',
  ].join('\n')
}

function zoneFile(zone: KnotZone): string {
  return [
    `$ORIGIN ${zone.name}.`,
    '$TTL 3600',
    `@ SOA ns1.${zone.name}. hostmaster.${zone.name}. 1 3600 600 604800 300`,
    `@ NS ns1.${zone.name}.`,
    'ns1 A 127.0.0.1',
    ...(zone.records ?? []),
    '',
  ].join('\n')
}

/** Starts knotd with `zones` loaded from zone files and the update key allowed on each. */
export async function startKnot(zones: KnotZone[]): Promise<KnotServer> {
  const found = binaries()
  // Failing (never skipping), as for PowerDNS: a missing server must not turn these tests green.
  if (!found) throw new Error(`Knot DNS (knotd, knotc) is not installed: ${INSTALL}`)
  const dir = mkdtempSync(join(tmpdir(), 'dw-knot-'))
  const dnsPort = await freePort()
  const key: TsigKey = { name: 'dmarcwatch-test', algorithm: 'hmac-sha256', secret: secret() }
  const otherKey: TsigKey = { name: 'other-test', algorithm: 'hmac-sha256', secret: secret() }
  const configPath = join(dir, 'knot.conf')
  writeFileSync(configPath, config(dir, dnsPort, [key, otherKey], zones))
  for (const zone of zones) writeFileSync(join(dir, `${zone.name}.zone`), zoneFile(zone))

  const knotc = async (...args: string[]) => {
    const child = Bun.spawn([found.control, '-c', configPath, ...args], { stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    if (code !== 0) throw new Error(`knotc ${args.join(' ')} failed (${code}): ${err}${out}`)
    return out
  }

  const server = startServerProcess([found.server, '-c', configPath], dir)
  const { child, stop } = server

  // Ready when it accepts TCP and every zone is loaded (knotc zone-status names its serial).
  const ready = async () => {
    if (!(await accepts(dnsPort))) return false
    const status = await knotc('zone-status')
    return zones.every((zone) => new RegExp(`\\[${zone.name}\\.\\] .*serial: \\d`).test(status))
  }
  const deadline = Date.now() + 15_000
  while (!(await ready().catch(() => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`Knot DNS did not start (DNS ${dnsPort})\n${server.log()}`)
    }
    await Bun.sleep(50)
  }

  return { dnsPort, key, otherKey, knotc, stop }
}
