import { expect } from 'bun:test'
import { sql } from 'drizzle-orm'
import { splitTxtStrings } from '../../domain/spf/chain.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { type DnsTestServer, startDnsServer, type Zone, type ZoneRecord } from './dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from './test-app.ts'

// The app with a loopback DNS server holding the senders' SPF records, for the SPF management API
// tests: domains are added through the API and verified by publishing their token in that DNS.

export const SPF_ZONE = 'spf.dmarcwatch.test'

export const spf = (text: string): ZoneRecord => ({ type: 'TXT', data: splitTxtStrings(text) })

/** include:big.example costs 10 lookups: itself and nine nested includes. */
const leaves: Zone = Object.fromEntries(
  Array.from({ length: 9 }, (_, i) => [`l${i + 1}.big.example`, [spf(`v=spf1 ip4:10.0.${i + 1}.0/24 -all`)]]),
)

export const SENDERS: Zone = {
  '_spf.mailer.example': [spf('v=spf1 ip4:192.0.2.0/24 -all')],
  'sendgrid.net': [spf('v=spf1 ip4:149.72.0.0/16 ip4:167.89.0.0/17 -all')],
  'big.example': [
    spf(`v=spf1 ${Array.from({ length: 9 }, (_, i) => `include:l${i + 1}.big.example`).join(' ')} -all`),
  ],
  ...leaves,
}

export interface SpfTestApp {
  t: TestApp
  dns: DnsTestServer
  /** Adds a domain through the API (optionally publishing its SPF record) and verifies it. */
  addDomain(account: TestAccount, name: string, options?: { spf?: string; verify?: boolean }): Promise<number>
  /** One daily rollup row of report data for a domain. */
  report(
    account: TestAccount,
    domainId: number,
    row: { ip: string; messages: number; dkimAligned: boolean; spfAligned: boolean; dkimDomains?: string[] },
  ): Promise<void>
  close(): Promise<void>
}

export async function startSpfApp(env: Record<string, string> = {}): Promise<SpfTestApp> {
  const dns = await startDnsServer(SENDERS)
  const t = await startTestApp({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '500',
    INGEST_DOMAIN: 'in.dmarcwatch.test',
    SPF_ZONE,
    RATE_LIMIT_API_PER_MINUTE: '10000',
    ...env,
  })
  return {
    t,
    dns,
    async addDomain(account, name, options = {}) {
      if (options.spf !== undefined) dns.set(name, 'TXT', [{ data: splitTxtStrings(options.spf) }])
      const created = await t.request('POST', '/api/v1/domains', {
        token: account.token,
        body: { domain_name: name },
      })
      expect(created.status).toBe(201)
      if (options.verify !== false) {
        const { txt_name, txt_value } = created.body.data.verification
        dns.set(txt_name, 'TXT', [{ data: txt_value }])
        const verified = await t.request('POST', `/api/v1/domains/${name}/verify`, { token: account.token })
        expect(verified.body.data.verified).toBe(true)
      }
      const rows = rowsOf<{ id: string }>(
        await t.db.database.db.execute(
          sql`select id from domains where name = ${name} and account_id = ${account.accountId}`,
        ),
      )
      return Number(rows[0]!.id)
    },
    async report(account, domainId, row) {
      const day = t.clock.now.toISOString().slice(0, 10)
      const domains = `{${(row.dkimDomains ?? []).join(',')}}`
      await t.db.database.db.execute(sql`insert into daily_rollups
        (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, dkim_domains, reports)
        values (${account.accountId}, ${domainId}, ${day}::date, ${row.ip}::inet, 'none', ${row.dkimAligned},
          ${row.spfAligned}, ${row.messages}, ${domains}::text[], 1)`)
    },
    async close() {
      await t.close()
      await dns.stop()
    },
  }
}
