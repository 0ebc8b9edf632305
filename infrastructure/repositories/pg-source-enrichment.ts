import { sql } from 'drizzle-orm'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { parseIp, reverseName } from '../../domain/spf/ip.ts'
import { type Db, rowsOf } from '../db/database.ts'

/** Lookups at once by default: each answer is a callback on the thread the API may share (ROLE=all). */
const CONCURRENCY = 4
/** Rows a statement: one round trip for many answers, not one each. */
const UPSERT_ROWS = 200

/**
 * Reverse DNS of source IPs seen in the last days and not looked up yet (or looked up over a week
 * ago), through the DNS port and its cache. Returns how many were looked up.
 */
export async function enrichSources(
  deps: { db: Db; dns: DnsResolver; now: () => Date },
  /** `limit` IPs per run, `concurrency` lookups at once (ENRICH_PTR_PER_RUN, ENRICH_PTR_CONCURRENCY). */
  input: { limit: number; concurrency?: number },
): Promise<number> {
  const due = rowsOf<{ ip: string }>(
    await deps.db.execute(sql`select distinct host(r.source_ip) as ip from daily_rollups r
      left join source_ips s on s.ip = r.source_ip
      where r.day >= current_date - 3 and (s.ip is null or s.checked_at < now() - interval '7 days')
      limit ${input.limit}`),
  )
  const results: { ip: string; ptr: string | null; status: 'ok' | 'none' | 'error' }[] = []
  const concurrency = input.concurrency ?? CONCURRENCY
  for (let i = 0; i < due.length; i += concurrency) {
    const batch = due.slice(i, i + concurrency)
    results.push(
      ...(await Promise.all(
        batch.map(async ({ ip }) => {
          const parsed = parseIp(ip)
          if (parsed === null) return { ip, ptr: null, status: 'error' as const }
          const answer = await deps.dns.resolve(reverseName(parsed), 'PTR')
          if (answer.status === 'ok') {
            const ptr = answer.records.find((r) => r.type === 'PTR')
            return { ip, ptr: ptr?.type === 'PTR' ? ptr.target.toLowerCase() : null, status: 'ok' as const }
          }
          return {
            ip,
            ptr: null,
            status:
              answer.status === 'nxdomain' || answer.status === 'nodata'
                ? ('none' as const)
                : ('error' as const),
          }
        }),
      )),
    )
  }
  const now = deps.now().toISOString()
  for (let i = 0; i < results.length; i += UPSERT_ROWS) {
    const rows = results
      .slice(i, i + UPSERT_ROWS)
      .map((r) => sql`(${r.ip}::inet, ${r.ptr}, ${r.status}, ${now}::timestamptz)`)
    await deps.db.execute(sql`insert into source_ips (ip, ptr, ptr_status, checked_at)
      values ${sql.join(rows, sql`, `)}
      on conflict (ip) do update set ptr = excluded.ptr, ptr_status = excluded.ptr_status, checked_at = excluded.checked_at`)
  }
  return results.length
}
