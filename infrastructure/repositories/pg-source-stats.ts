import { sql } from 'drizzle-orm'
import type { SourceOverride } from '../../domain/sources/classify.ts'
import type { OverrideEntry } from '../../domain/sources/list-sources.ts'
import type { DailyVolume } from '../../domain/sources/policy-readiness.ts'
import type { SourceFigures } from '../../domain/sources/ports.ts'
import type { SourceStats } from '../../domain/sources/source-stats.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { pgArray } from './sql-tx.ts'

// The read side of the sources view (issue #5): per-IP figures summed from the daily rollups, the
// owner's verdicts on IPs, and the daily totals policy readiness needs. Every tenant read filters
// by account and domain; overrides carry no account column, so they are reached through the
// domain's account.

export interface SourceScope {
  accountId: string
  domainId: number
  /** Inclusive ISO dates. */
  from: string
  to: string
}

export type StoredOverride = OverrideEntry

/** Classification evidence kept per IP: enough to name the services, bounded whatever the volume. */
export const MAX_SOURCE_DOMAINS = 8

const num = (value: unknown) => Number(value ?? 0)
const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : [])

/**
 * One entry per source IP that sent for the domain in the period (optionally only `ip`, or `ips`), counts
 * weighted by messages. The domain lists are the distinct union over the period's rows, first
 * MAX_SOURCE_DOMAINS in code-point order (`collate "C"`, so both backends agree).
 */
export async function sourceStats(
  db: Db,
  scope: SourceScope & { ip?: string; ips?: readonly string[] },
): Promise<SourceStats[]> {
  const only = sql.join(
    [
      scope.ip === undefined ? sql.empty() : sql` and r.source_ip = ${scope.ip}::inet`,
      scope.ips === undefined ? sql.empty() : sql` and r.source_ip = any(${pgArray(scope.ips)}::inet[])`,
    ],
    sql``,
  )
  const cap = sql.raw(String(MAX_SOURCE_DOMAINS))
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`with period as (
        select r.* from daily_rollups r
        where r.account_id = ${scope.accountId} and r.domain_id = ${scope.domainId}
          and r.day between ${scope.from}::date and ${scope.to}::date${only}
      ), figures as (
        select source_ip, sum(messages) as messages,
          coalesce(sum(messages) filter (where dkim_aligned or spf_aligned), 0) as dmarc_pass,
          coalesce(sum(messages) filter (where dkim_aligned), 0) as dkim_aligned,
          coalesce(sum(messages) filter (where spf_aligned), 0) as spf_aligned,
          sum(dkim_pass) as dkim_pass, sum(spf_pass) as spf_pass, sum(forwarded) as forwarded,
          coalesce(sum(messages) filter (where disposition = 'quarantine'), 0) as quarantined,
          coalesce(sum(messages) filter (where disposition = 'reject'), 0) as rejected,
          to_char(min(day), 'YYYY-MM-DD') as first_seen, to_char(max(day), 'YYYY-MM-DD') as last_seen
        from period group by source_ip
      ), dkim as (
        select source_ip, (array_agg(name order by name collate "C"))[1:${cap}] as names
        from (select distinct p.source_ip, d.name from period p, unnest(p.dkim_domains) as d(name)) x
        group by source_ip
      ), spf as (
        select source_ip, (array_agg(name order by name collate "C"))[1:${cap}] as names
        from (select distinct p.source_ip, d.name from period p, unnest(p.spf_domains) as d(name)) x
        group by source_ip
      )
      select host(f.source_ip) as ip, f.*, s.ptr, dkim.names as dkim_domains, spf.names as spf_domains
      from figures f
        left join source_ips s on s.ip = f.source_ip
        left join dkim on dkim.source_ip = f.source_ip
        left join spf on spf.source_ip = f.source_ip
      order by f.messages desc, f.source_ip`),
  )
  return rows.map((r) => ({
    ip: String(r.ip),
    messages: num(r.messages),
    dmarcPass: num(r.dmarc_pass),
    dkimAligned: num(r.dkim_aligned),
    spfAligned: num(r.spf_aligned),
    dkimPass: num(r.dkim_pass),
    spfPass: num(r.spf_pass),
    forwarded: num(r.forwarded),
    quarantined: num(r.quarantined),
    rejected: num(r.rejected),
    firstSeen: String(r.first_seen),
    lastSeen: String(r.last_seen),
    ptr: (r.ptr as string | null) ?? null,
    dkimDomains: list(r.dkim_domains),
    spfDomains: list(r.spf_domains),
  }))
}

/** Domain totals per day in the period, days with reports only, oldest first. */
export async function dailyVolumes(db: Db, scope: SourceScope): Promise<DailyVolume[]> {
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`select to_char(day, 'YYYY-MM-DD') as day, messages, dmarc_pass
      from daily_domain_totals
      where account_id = ${scope.accountId} and domain_id = ${scope.domainId}
        and day between ${scope.from}::date and ${scope.to}::date
      order by day`),
  )
  return rows.map((r) => ({ day: String(r.day), messages: num(r.messages), dmarcPass: num(r.dmarc_pass) }))
}

const presentOverride = (r: Record<string, unknown>): StoredOverride => ({
  ip: String(r.ip),
  status: r.status as SourceOverride,
  note: (r.note as string | null) ?? null,
  updatedAt: r.updated_at instanceof Date ? r.updated_at : new Date(String(r.updated_at)),
})

/** The owner's verdicts on the domain's source IPs. */
export async function listOverrides(
  db: Db,
  scope: { accountId: string; domainId: number },
): Promise<StoredOverride[]> {
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`select host(o.source_ip) as ip, o.status, o.note, o.updated_at
      from source_overrides o join domains d on d.id = o.domain_id
      where o.domain_id = ${scope.domainId} and d.account_id = ${scope.accountId}
      order by o.source_ip`),
  )
  return rows.map(presentOverride)
}

/**
 * Sets (or, with status null, removes) the verdict on one IP. Written only when the domain belongs
 * to the account, so a wrong pairing changes nothing. Returns the stored override, null when removed.
 */
export async function setOverride(
  db: Db,
  input: {
    accountId: string
    domainId: number
    ip: string
    status: SourceOverride | null
    /** Omitted (undefined) keeps the note already stored; null clears it. */
    note?: string | null
    now: Date
  },
): Promise<StoredOverride | null> {
  if (input.status === null) {
    await db.execute(sql`delete from source_overrides o using domains d
      where o.domain_id = ${input.domainId} and o.source_ip = ${input.ip}::inet
        and d.id = o.domain_id and d.account_id = ${input.accountId}`)
    return null
  }
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`insert into source_overrides (domain_id, source_ip, status, note, updated_at)
      select d.id, ${input.ip}::inet, ${input.status}, ${input.note ?? null}, ${input.now.toISOString()}::timestamptz
      from domains d where d.id = ${input.domainId} and d.account_id = ${input.accountId}
      on conflict (domain_id, source_ip) do update
        set status = excluded.status, updated_at = excluded.updated_at,
          note = ${input.note === undefined ? sql`source_overrides.note` : sql`excluded.note`}
      returning host(source_ip) as ip, status, note, updated_at`),
  )
  return rows[0] === undefined ? null : presentOverride(rows[0])
}

/** The figures as the use cases' port (domain/sources/ports.ts). */
export function pgSourceFigures(db: Db): SourceFigures {
  return {
    stats: (scope, period) => sourceStats(db, { ...scope, ...period }),
    overrides: (scope) => listOverrides(db, scope),
    daily: (scope, period) => dailyVolumes(db, { ...scope, ...period }),
    setOverride: (scope, input) => setOverride(db, { ...scope, ...input }),
  }
}
