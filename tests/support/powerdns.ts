// A private PowerDNS Authoritative server per test file, so the DNS provider adapters are tested
// against a real server: its HTTP API, its RFC 2136 UPDATE with TSIG, its zone transfers, and what
// it then serves over DNS. Everything — config, SQLite database, control socket — lives in one temp
// dir; /etc/powerdns and any system instance are never touched. CI installs the Debian packages
// `pdns-server` and `pdns-backend-sqlite3` (.ci/run).

import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TsigKey } from '../../infrastructure/dns-providers/tsig.ts'
import { accepts, freePort } from './free-port.ts'
import { startServerProcess } from './server-process.ts'

export interface PowerDnsServer {
  /** DNS over UDP and TCP on 127.0.0.1. */
  dnsPort: number
  /** The webserver origin, `http://127.0.0.1:<port>`. */
  apiUrl: string
  apiKey: string
  /** Allowed to update (and transfer) every zone. */
  key: TsigKey
  /** Known to the server but allowed nowhere: its updates are refused. */
  otherKey: TsigKey
  pdnsutil(...args: string[]): Promise<string>
  stop(): Promise<void>
}

const INSTALL = 'apt-get install pdns-server pdns-backend-sqlite3'
const SCHEMAS = [
  '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql',
  '/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql',
  '/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql.gz',
]

function binaries(): { server: string; util: string; schema: string } | null {
  const server = Bun.which('pdns_server') ?? ['/usr/sbin/pdns_server'].find(existsSync)
  const util = Bun.which('pdnsutil') ?? ['/usr/bin/pdnsutil'].find(existsSync)
  const schema = SCHEMAS.find(existsSync)
  return server && util && schema ? { server, util, schema } : null
}

function config(dir: string, dnsPort: number, apiPort: number, apiKey: string): string {
  return [
    'launch=gsqlite3',
    `gsqlite3-database=${dir}/pdns.sqlite3`,
    'gsqlite3-dnssec=yes',
    'local-address=127.0.0.1',
    `local-port=${dnsPort}`,
    `socket-dir=${dir}`,
    'guardian=no',
    'daemon=no',
    'disable-syslog=yes',
    'loglevel=4',
    // No security-status lookups to the internet, and no stray threads for a test server.
    'security-poll-suffix=',
    'receiver-threads=1',
    'distributor-threads=1',
    'api=yes',
    `api-key=${apiKey}`,
    'webserver=yes',
    'webserver-address=127.0.0.1',
    `webserver-port=${apiPort}`,
    'webserver-allow-from=127.0.0.0/8',
    // RFC 2136 updates from loopback, each zone further limited to its TSIG-ALLOW-DNSUPDATE keys.
    'dnsupdate=yes',
    'allow-dnsupdate-from=127.0.0.0/8',
    // Zone transfers only with a key listed in the zone's TSIG-ALLOW-AXFR (no address is enough).
    'allow-axfr-ips=',
    '',
  ].join('\n')
}

const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')

/** Starts PowerDNS with `zones` created (SOA and NS only) and the update key allowed on each. */
export async function startPowerDns(zones: string[]): Promise<PowerDnsServer> {
  const found = binaries()
  // Failing (never skipping) is deliberate, as for Dovecot and Chromium: a missing server must not
  // turn the DNS provider tests green. .ci/run installs it.
  if (!found)
    throw new Error(`PowerDNS (pdns_server, pdnsutil, the SQLite schema) is not installed: ${INSTALL}`)
  const dir = mkdtempSync(join(tmpdir(), 'dw-pdns-'))
  const [dnsPort, apiPort] = [await freePort(), await freePort()]
  const apiKey = `key-${crypto.randomUUID()}`
  const key: TsigKey = { name: 'dmarcwatch-test', algorithm: 'hmac-sha256', secret: secret() }
  const otherKey: TsigKey = { name: 'other-test', algorithm: 'hmac-sha256', secret: secret() }
  writeFileSync(join(dir, 'pdns.conf'), config(dir, dnsPort, apiPort, apiKey))

  const schemaText = found.schema.endsWith('.gz')
    ? new TextDecoder().decode(Bun.gunzipSync(readFileSync(found.schema)))
    : readFileSync(found.schema, 'utf8')
  const db = new Database(join(dir, 'pdns.sqlite3'))
  db.exec(schemaText)
  db.close()

  const pdnsutil = async (...args: string[]) => {
    const child = Bun.spawn([found.util, `--config-dir=${dir}`, ...args], { stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    if (code !== 0) throw new Error(`pdnsutil ${args.join(' ')} failed (${code}): ${err}`)
    return out
  }
  await pdnsutil('import-tsig-key', key.name, key.algorithm, key.secret)
  await pdnsutil('import-tsig-key', otherKey.name, otherKey.algorithm, otherKey.secret)
  for (const zone of zones) {
    await pdnsutil('create-zone', zone, `ns1.${zone}`)
    await pdnsutil('set-meta', zone, 'ALLOW-DNSUPDATE-FROM', '127.0.0.0/8')
    await pdnsutil('set-meta', zone, 'TSIG-ALLOW-DNSUPDATE', key.name)
    // `primary` puts the key in the zone's TSIG-ALLOW-AXFR.
    await pdnsutil('activate-tsig-key', zone, key.name, 'primary')
  }

  const server = startServerProcess([found.server, `--config-dir=${dir}`], dir)
  const { child, stop } = server

  const apiUrl = `http://127.0.0.1:${apiPort}`
  const ready = async () => {
    if (!(await accepts(dnsPort))) return false
    const response = await fetch(`${apiUrl}/api/v1/servers/localhost`, { headers: { 'X-API-Key': apiKey } })
    return response.ok
  }
  const deadline = Date.now() + 15_000
  while (!(await ready().catch(() => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`PowerDNS did not start (DNS ${dnsPort}, API ${apiPort})\n${server.log()}`)
    }
    await Bun.sleep(50)
  }

  return { dnsPort, apiUrl, apiKey, key, otherKey, pdnsutil, stop }
}
