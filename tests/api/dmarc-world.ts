import { sql } from 'drizzle-orm'
import type { DnsAnswer, DnsResolver } from '../../domain/dns/ports.ts'
import { isSubdomainOrSelf } from '../../domain/spf/lookups.ts'
import { type Db, rowsOf } from '../../infrastructure/db/database.ts'
import {
  type AuthoritativeResponder,
  startAuthoritativeResponder,
} from '../../infrastructure/dns/authoritative-responder.ts'
import { createDnsPacketResolver } from '../../infrastructure/dns/dns-packet-resolver.ts'
import { pgSpfStore } from '../../infrastructure/repositories/pg-spf-store.ts'
import { type App, buildApp } from '../../src/compose.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// The world of the hosted DMARC and policy progression API tests: the loopback DNS server holds the
// users' zones (their `_dmarc` records and CNAMEs), the built-in responder serves SPF_ZONE from the
// store, and `world` resolves like a recursive resolver would: a CNAME found at the users' server
// is followed into the responder, every hop a real DNS query. The app under test uses `world`.

export const ZONE = 'spf.dmarcwatch.test'
const DAY = 86_400_000

export interface SourceDay {
  ip: string
  /** Messages per day, and how many of them pass DMARC (DKIM and SPF aligned). */
  messages: number
  pass: number
}

export interface DmarcWorld {
  t: TestApp
  app: App
  dns: DnsTestServer
  world: DnsResolver
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: any }>
  /** Adds a domain through the API, then marks it verified (unless told not to) at an automation level. */
  addDomain(
    account: TestAccount,
    name: string,
    options?: { automation?: string; verified?: boolean },
  ): Promise<number>
  /** Publishes `_dmarc.<name>` CNAME <target> at the users' DNS server (the TXT there is removed). */
  pointCname(name: string, target: string): void
  /** The TXT records `_dmarc.<name>` resolves to through the CNAME, over real DNS. */
  dmarcTxt(name: string): Promise<string[]>
  /** Daily rollups and totals for `daysAgo` (inclusive range, 0 = today by the app's clock). */
  seed(account: TestAccount, domainId: number, range: [number, number], sources: SourceDay[]): Promise<void>
  markLegitimate(domainId: number, ip: string): Promise<void>
  close(): Promise<void>
}

export async function startDmarcWorld(env: Record<string, string> = {}): Promise<DmarcWorld> {
  const dns = await startDnsServer({})
  const t = await startTestApp(
    {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '500',
      INGEST_DOMAIN: 'dmarcwatch.test',
      SPF_ZONE: ZONE,
      RATE_LIMIT_API_PER_MINUTE: '10000',
      ...env,
    },
    { queue: true },
  )
  const store = pgSpfStore(t.db.database.db, { zone: ZONE })
  const responder: AuthoritativeResponder = await startAuthoritativeResponder({
    host: '127.0.0.1',
    port: 0,
    zone: ZONE,
    nameservers: ['ns1.dmarcwatch.test'],
    hostmaster: 'hostmaster@dmarcwatch.test',
    lookup: (name) => store.hostedTxt(name),
  })
  const hosted = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: responder.port }] })
  const users = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 500 })
  async function resolve(
    name: string,
    type: Parameters<DnsResolver['resolve']>[1],
    hops = 0,
  ): Promise<DnsAnswer> {
    if (isSubdomainOrSelf(name.toLowerCase().replace(/\.$/, ''), ZONE)) return hosted.resolve(name, type)
    if (type !== 'CNAME' && hops < 8) {
      const alias = await users.resolve(name, 'CNAME')
      const record = alias.status === 'ok' ? alias.records.find((r) => r.type === 'CNAME') : undefined
      if (record?.type === 'CNAME') return resolve(record.target, type, hops + 1)
    }
    return users.resolve(name, type)
  }
  const world: DnsResolver = { resolve: (name, type) => resolve(name, type) }
  // No cache: the tests change DNS between requests.
  const app = buildApp({ ...t.runtime, dns: { ...world, stats: () => ({ hits: 0, misses: 0, size: 0 }) } })
  const db = t.db.database.db

  const self: DmarcWorld = {
    t,
    app,
    dns,
    world,
    async request(method, path, options = {}) {
      const headers = new Headers()
      if (options.token) headers.set('authorization', `Bearer ${options.token}`)
      if (options.body !== undefined) headers.set('content-type', 'application/json')
      const body = options.body === undefined ? undefined : JSON.stringify(options.body)
      const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
      const text = await response.text()
      return { status: response.status, body: text === '' ? null : JSON.parse(text) }
    },
    async addDomain(account, name, options = {}) {
      const created = await self.request('POST', '/api/v1/domains', {
        token: account.token,
        body: { domain_name: name },
      })
      if (created.status !== 201) throw new Error(`domain ${name}: ${created.status}`)
      const rows = rowsOf<{ id: string }>(
        await db.execute(sql`update domains set automation_level = ${options.automation ?? 'manual'},
            verified_at = ${options.verified === false ? null : t.clock.now.toISOString()}::timestamptz
          where name = ${name} and account_id = ${account.accountId} returning id`),
      )
      return Number(rows[0]!.id)
    },
    pointCname(name, target) {
      dns.set(`_dmarc.${name}`, 'TXT', [])
      dns.set(`_dmarc.${name}`, 'CNAME', [{ data: target }])
    },
    async dmarcTxt(name) {
      const answer = await world.resolve(`_dmarc.${name}`, 'TXT')
      if (answer.status !== 'ok') return []
      return answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : ''))
    },
    seed: (account, domainId, range, sources) =>
      seedReportDays(db, t.clock.now, account.accountId, domainId, range, sources),
    markLegitimate: (domainId, ip) => markLegitimateSource(db, domainId, ip),
    async close() {
      await responder.close()
      await t.close()
      await dns.stop()
    },
  }
  return self
}

/** Daily rollups and totals for `daysAgo` (inclusive range, 0 = the day of `now`). */
export async function seedReportDays(
  db: Db,
  now: Date,
  accountId: string,
  domainId: number,
  [oldest, newest]: [number, number],
  sources: SourceDay[],
) {
  const isoDay = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY).toISOString().slice(0, 10)
  for (let ago = oldest; ago >= newest; ago--) {
    const day = isoDay(ago)
    for (const s of sources) {
      for (const [aligned, messages] of [
        [true, s.pass],
        [false, s.messages - s.pass],
      ] as const) {
        if (messages === 0) continue
        await db.execute(sql`insert into daily_rollups (account_id, domain_id, day, source_ip, disposition,
            dkim_aligned, spf_aligned, messages, reports)
          values (${accountId}, ${domainId}, ${day}::date, ${s.ip}::inet, 'none', ${aligned},
            ${aligned}, ${messages}, 1)`)
      }
    }
    const messages = sources.reduce((sum, s) => sum + s.messages, 0)
    const pass = sources.reduce((sum, s) => sum + s.pass, 0)
    await db.execute(sql`insert into daily_domain_totals (account_id, domain_id, day, messages, dmarc_pass,
        dkim_aligned, spf_aligned, disposition_none, disposition_quarantine, disposition_reject,
        disposition_other, reports)
      values (${accountId}, ${domainId}, ${day}::date, ${messages}, ${pass}, ${pass}, ${pass},
        ${messages}, 0, 0, 0, 1)`)
  }
}

export async function markLegitimateSource(db: Db, domainId: number, ip: string) {
  await db.execute(sql`insert into source_overrides (domain_id, source_ip, status, updated_at)
    values (${domainId}, ${ip}::inet, 'legitimate', now())`)
}
