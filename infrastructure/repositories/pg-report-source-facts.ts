import { sql } from 'drizzle-orm'
import type { DaySource, DomainRef, ReportSourceFacts } from '../../domain/alerts/ports.ts'
import {
  UNKNOWN_SOURCE_MIN_MESSAGES,
  UNKNOWN_SOURCE_MIN_SHARE,
  UNKNOWN_SOURCE_SHARE_FLOOR,
} from '../../domain/alerts/rules/reports.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { sourceStats } from './pg-source-stats.ts'
import { pgArray } from './sql-tx.ts'

// The day's sources the report rules read (docs/alerts.md, "How the report rules read their
// facts"): a page of IPs chosen in SQL along the rollups' (domain, day, source_ip) key, then their
// figures and first day. Sources no rule can count are left out in SQL: a DMARC pass with no
// owner's verdict makes a source legitimate (a service named), a forwarder, or an unknown one that
// alerts only when large on its own (domain/alerts/rules/reports.ts, `summarize`). The share test
// is on exact numerics and leaves out only sources strictly below the share, so that a source the
// rule's floating-point share would count is always read.

const num = (value: unknown) => Number(value ?? 0)

export function pgReportSourceFacts(db: Db): ReportSourceFacts {
  return {
    async dayVolume(ref: DomainRef, day: string) {
      const rows = rowsOf<{ messages: unknown; sources: unknown }>(
        await db.execute(sql`select coalesce(sum(messages), 0) as messages,
            count(distinct source_ip) as sources
          from daily_rollups
          where account_id = ${ref.accountId} and domain_id = ${ref.domainId} and day = ${day}::date`),
      )
      return { messages: num(rows[0]?.messages), sources: num(rows[0]?.sources) }
    },

    async sourcePage(ref, day, { afterIp, limit, volume }): Promise<DaySource[]> {
      const after = afterIp === null ? sql.empty() : sql` and r.source_ip > ${afterIp}::inet`
      const picked = rowsOf<{ ip: string }>(
        await db.execute(sql`select host(r.source_ip) as ip from daily_rollups r
          where r.account_id = ${ref.accountId} and r.domain_id = ${ref.domainId} and r.day = ${day}::date${after}
          group by r.source_ip
          having not (
            coalesce(sum(r.messages) filter (where r.dkim_aligned or r.spf_aligned), 0) > 0
            and sum(r.messages) <= ${UNKNOWN_SOURCE_MIN_MESSAGES}
            and (sum(r.messages) < ${UNKNOWN_SOURCE_SHARE_FLOOR}
              or sum(r.messages)::numeric < ${volume}::numeric * ${String(UNKNOWN_SOURCE_MIN_SHARE)}::numeric)
            and not exists (select 1 from source_overrides o
              where o.domain_id = ${ref.domainId} and o.source_ip = r.source_ip))
          order by r.source_ip
          limit ${limit}`),
      ).map((r) => String(r.ip))
      if (picked.length === 0) return []
      const [stats, first] = await Promise.all([
        sourceStats(db, { ...ref, from: day, to: day, ips: picked }),
        db.execute(sql`select host(source_ip) as ip, to_char(min(day), 'YYYY-MM-DD') as first_seen
          from daily_rollups
          where account_id = ${ref.accountId} and domain_id = ${ref.domainId}
            and source_ip = any(${pgArray(picked)}::inet[])
          group by source_ip`),
      ])
      const firstSeen = new Map(
        rowsOf<{ ip: string; first_seen: string }>(first).map((r) => [r.ip, r.first_seen]),
      )
      const byIp = new Map(stats.map((s) => [s.ip, s]))
      return picked.flatMap((ip) => {
        const s = byIp.get(ip)
        return s === undefined ? [] : [{ stats: s, firstSeen: firstSeen.get(ip) ?? s.firstSeen }]
      })
    },
  }
}
