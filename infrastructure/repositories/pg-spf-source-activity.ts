import { type SQL, sql } from 'drizzle-orm'
import type { SourceActivity, SourceActivityReader } from '../../domain/spf-management/ports.ts'
import { type Db, rowsOf } from '../db/database.ts'

// Per-IP report figures of one domain for SPF management (detect-sources, add-to-spf), from the
// daily rollups (scoped by account), the shared PTR facts and the user's verdicts on IPs.

interface Row {
  ip: string
  messages: string | number
  spf_aligned: string | number
  dmarc_pass: string | number
  dkim_domains: string | null
  ptr: string | null
  override: string | null
}

const OVERRIDES = new Set(['legitimate', 'unwanted', 'forwarder'])

function toActivity(row: Row): SourceActivity {
  const domains = new Set((row.dkim_domains ?? '').split(' ').filter((d) => d !== ''))
  const override = row.override !== null && OVERRIDES.has(row.override) ? row.override : null
  return {
    ip: row.ip,
    messages: Number(row.messages),
    spfAligned: Number(row.spf_aligned),
    dmarcPass: Number(row.dmarc_pass),
    ptr: row.ptr,
    dkimDomains: [...domains].sort(),
    override: override as SourceActivity['override'],
  }
}

async function activity(db: Db, accountId: string, domainId: number, filter: SQL): Promise<SourceActivity[]> {
  // Arrays of different lengths cannot be array_agg'ed into one: joined as text and split here.
  const rows = rowsOf<Row>(
    await db.execute(sql`select host(r.source_ip) as ip,
        sum(r.messages) as messages,
        sum(case when r.spf_aligned then r.messages else 0 end) as spf_aligned,
        sum(case when r.spf_aligned or r.dkim_aligned then r.messages else 0 end) as dmarc_pass,
        string_agg(array_to_string(r.dkim_domains, ' '), ' ') as dkim_domains,
        max(s.ptr) as ptr,
        max(o.status) as override
      from daily_rollups r
      left join source_ips s on s.ip = r.source_ip
      left join source_overrides o on o.domain_id = r.domain_id and o.source_ip = r.source_ip
      where r.account_id = ${accountId} and r.domain_id = ${domainId} and ${filter}
      group by r.source_ip
      order by sum(r.messages) desc`),
  )
  return rows.map(toActivity)
}

export function pgSpfSourceActivity(db: Db): SourceActivityReader {
  return {
    recent: (accountId, domainId, since) => activity(db, accountId, domainId, sql`r.day >= ${since}::date`),
    async one(accountId, domainId, ip, since) {
      const filter = sql`r.source_ip = ${ip}::inet and r.day >= ${since}::date`
      const [found] = await activity(db, accountId, domainId, filter)
      return found ?? null
    },
  }
}
