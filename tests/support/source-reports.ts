import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { enrichSources } from '../../infrastructure/repositories/pg-source-enrichment.ts'
import { startWorkers } from '../../src/worker.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { type DnsTestServer, startDnsServer, type Zone } from './dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from './test-app.ts'

// The sources API tests' world: a loopback DNS server publishing acme.example's SPF and DMARC
// records, the providers' SPF records and the PTRs of the sending IPs; the whole app with its
// worker; and two real aggregate reports ingested through the HTTP intake, then enriched with
// reverse DNS as the worker's enrichment job does.
//
// Sources (messages over both reports; p=none so receivers delivered everything):
//   74.125.0.1     Google     100  DKIM and SPF aligned
//   149.72.10.20   SendGrid    50  SPF aligned on 45 (through include:sendgrid.net), DKIM d=sendgrid.net
//   203.0.113.9    spoofer     25  nothing passes, no PTR
//   198.51.100.7   partner     10  PTR mx.partner.example, SPF softfail
//   2001:db8::25   forwarder    3  DKIM aligned, forwarding override

export const DOMAIN = 'acme.example'

const zone: Zone = {
  [DOMAIN]: [{ type: 'TXT', data: 'v=spf1 include:_spf.google.com include:sendgrid.net ~all' }],
  [`_dmarc.${DOMAIN}`]: [{ type: 'TXT', data: `v=DMARC1; p=none; rua=mailto:dmarc@${DOMAIN}` }],
  '_spf.google.com': [{ type: 'TXT', data: 'v=spf1 ip4:74.125.0.0/16 ip4:209.85.128.0/17 ~all' }],
  'sendgrid.net': [{ type: 'TXT', data: 'v=spf1 ip4:149.72.0.0/16 ip4:167.89.0.0/17 -all' }],
  '1.0.125.74.in-addr.arpa': [{ type: 'PTR', data: 'mail-1.google.com' }],
  '20.10.72.149.in-addr.arpa': [{ type: 'PTR', data: 'o1.ptr4242.sendgrid.net' }],
  '7.100.51.198.in-addr.arpa': [{ type: 'PTR', data: 'mx.partner.example' }],
}

/** A record of a generated report: its source, count and the auth results the reporter saw. */
export interface ReportRow {
  ip: string
  count: number
  dkim?: [domain: string, selector: string, result: string]
  spf?: [domain: string, result: string]
  forwarded?: boolean
}

/** An aggregate report of one day about `domain` (RFC 7489 appendix C). */
export function reportXml(domain: string, org: string, id: string, begin: number, rows: ReportRow[]): string {
  const records = rows.map(
    (r) => `<record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count>
      <policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>fail</spf>${
        r.forwarded ? '<reason><type>forwarded</type></reason>' : ''
      }</policy_evaluated></row>
      <identifiers><header_from>${domain}</header_from></identifiers>
      <auth_results>${
        r.dkim
          ? `<dkim><domain>${r.dkim[0]}</domain><selector>${r.dkim[1]}</selector><result>${r.dkim[2]}</result></dkim>`
          : ''
      }<spf><domain>${r.spf?.[0] ?? domain}</domain><result>${r.spf?.[1] ?? 'fail'}</result></spf></auth_results>
    </record>`,
  )
  return `<?xml version="1.0" encoding="UTF-8"?>
<feedback><report_metadata><org_name>${org}</org_name><email>dmarc@${org}</email><report_id>${id}</report_id>
  <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
  <policy_published><domain>${domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><pct>100</pct></policy_published>
  ${records.join('\n')}
</feedback>`
}

export interface SourceWorld {
  t: TestApp
  dns: DnsTestServer
  owner: TestAccount
  stranger: TestAccount
  /** The report days, oldest first (ISO dates). */
  days: [string, string]
  close(): Promise<void>
}

async function ingest(t: TestApp, token: string, xml: string, name: string) {
  const raw = multipart([
    attachment('application/gzip', `${name}.xml.gz`, Bun.gzipSync(new TextEncoder().encode(xml))),
  ])
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/messages', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'message/rfc822' },
      body: raw,
    }),
  )
  if (response.status !== 202) throw new Error(`intake answered ${response.status}`)
  const id = ((await response.json()) as { data: { id: string } }).data.id
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const [row] = rowsOf<{ status: string; code: string | null }>(
      await t.db.database.db.execute(
        sql`select status, quarantine_code as code from ingest_messages where id = ${id}`,
      ),
    )
    if (row?.status === 'processed') return
    if (row?.status === 'quarantined') throw new Error(`report quarantined: ${row.code}`)
    await Bun.sleep(50)
  }
  throw new Error('report not processed in time')
}

export async function startSourceWorld(): Promise<SourceWorld> {
  const dns = await startDnsServer(zone)
  const t = await startTestApp(
    { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '500', RATE_LIMIT_API_PER_MINUTE: '10000' },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  const owner = await t.account()
  const stranger = await t.account()
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: DOMAIN } })
  await t.db.database.db.execute(
    sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${DOMAIN}`,
  )
  // The stranger has a domain of its own, so its 403s are not about having none.
  await t.request('POST', '/api/v1/domains', {
    token: stranger.token,
    body: { domain_name: 'other.example' },
  })

  const DAY = 86_400
  const today = Math.floor(t.clock.now.getTime() / 1000 / DAY) * DAY
  const google: ReportRow = {
    ip: '74.125.0.1',
    count: 0,
    dkim: [DOMAIN, 'google', 'pass'],
    spf: [DOMAIN, 'pass'],
  }
  await ingest(
    t,
    owner.token,
    reportXml(DOMAIN, 'google.com', 'g-1', today - 2 * DAY, [
      { ...google, count: 60 },
      { ip: '149.72.10.20', count: 45, dkim: ['sendgrid.net', 's1', 'pass'], spf: [DOMAIN, 'pass'] },
      { ip: '149.72.10.20', count: 5, dkim: ['sendgrid.net', 's1', 'pass'], spf: [DOMAIN, 'fail'] },
      { ip: '203.0.113.9', count: 20 },
    ]),
    'google',
  )
  await ingest(
    t,
    owner.token,
    reportXml(DOMAIN, 'yahoo.com', 'y-1', today - DAY, [
      { ...google, count: 40 },
      { ip: '198.51.100.7', count: 10, spf: [DOMAIN, 'softfail'] },
      { ip: '203.0.113.9', count: 5 },
      { ip: '2001:0db8:0000::0025', count: 3, dkim: [DOMAIN, 'k1', 'pass'], forwarded: true },
    ]),
    'yahoo',
  )
  // The enrichment job's work, done now rather than on its schedule.
  await enrichSources({ db: t.db.database.db, dns: t.runtime.dns, now: t.runtime.now }, { limit: 100 })
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)
  return {
    t,
    dns,
    owner,
    stranger,
    days: [iso(today - 2 * DAY), iso(today - DAY)],
    async close() {
      await t.close()
      await dns.stop()
    },
  }
}
