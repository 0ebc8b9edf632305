import { and, asc, desc, eq, gte, inArray, isNull, lt, sql } from 'drizzle-orm'
import type { AlertType } from '../../domain/alerts/alert.ts'
import type { AlertDomain, AlertFacts, CheckRow, DomainRef } from '../../domain/alerts/ports.ts'
import type { Posture } from '../../domain/posture/posture.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { alerts } from '../db/schema/alerts.ts'
import { domains } from '../db/schema/domains.ts'
import { domainChecks } from '../db/schema/posture.ts'
import { pgArray } from './sql-tx.ts'

// What the alert evaluation jobs read: stored posture checks, the report figures' whereabouts, and
// how far the event rules have reported (from their alerts' evidence). The cross-account queries
// only name work to do (account and domain ids) for the schedulers; every query about one domain
// filters by its account too.

const toDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))
const refs = (rows: Record<string, unknown>[]): DomainRef[] =>
  rows.map((r) => ({ accountId: String(r.account_id), domainId: Number(r.domain_id) }))

const sameDomain = (domainId: number | null) =>
  domainId === null ? isNull(alerts.domainId) : eq(alerts.domainId, domainId)

const domainColumns = {
  domainId: domains.id,
  name: domains.name,
  dmarcPolicy: domains.dmarcPolicy,
  verifiedAt: domains.verifiedAt,
  createdAt: domains.createdAt,
}

export function pgAlertFacts(db: Db): AlertFacts {
  return {
    async domain(accountId: string, domainId: number): Promise<AlertDomain | null> {
      const rows = await db
        .select(domainColumns)
        .from(domains)
        .where(and(eq(domains.accountId, accountId), eq(domains.id, domainId)))
      return rows[0] ?? null
    },

    async accountDomains(accountId: string): Promise<AlertDomain[]> {
      return db
        .select(domainColumns)
        .from(domains)
        .where(eq(domains.accountId, accountId))
        .orderBy(asc(domains.name))
    },

    /**
     * Domains with a check stored at or after `since`, across accounts (the posture scheduler).
     * Read from the domain's own `checked_at` (every stored check sets it), not from the history,
     * which grows by every check of every domain.
     */
    async domainsCheckedSince(since: Date): Promise<DomainRef[]> {
      return refs(
        rowsOf(
          await db.execute(sql`select account_id, id as domain_id from domains
            where checked_at >= ${since.toISOString()}::timestamptz order by id`),
        ),
      )
    },

    /**
     * The domain's checks stored at or after `since`, preceded by the last one before it (the
     * baseline the first of them is compared with), oldest first.
     */
    async checksSince(accountId: string, domainId: number, since: Date): Promise<CheckRow[]> {
      const columns = {
        checkedAt: domainChecks.checkedAt,
        posture: domainChecks.posture,
        findings: domainChecks.findings,
      }
      const scope = and(eq(domainChecks.accountId, accountId), eq(domainChecks.domainId, domainId))
      const [before, recent] = await Promise.all([
        db
          .select(columns)
          .from(domainChecks)
          .where(and(scope, lt(domainChecks.checkedAt, since)))
          .orderBy(desc(domainChecks.checkedAt), desc(domainChecks.id))
          .limit(1),
        db
          .select(columns)
          .from(domainChecks)
          .where(and(scope, gte(domainChecks.checkedAt, since)))
          .orderBy(asc(domainChecks.checkedAt), asc(domainChecks.id)),
      ])
      return [...before, ...recent] as CheckRow[]
    },

    /** The posture of the domain's latest check; null before the first one. */
    async latestPosture(accountId: string, domainId: number): Promise<Posture | null> {
      const rows = await db
        .select({ posture: domainChecks.posture })
        .from(domainChecks)
        .where(and(eq(domainChecks.accountId, accountId), eq(domainChecks.domainId, domainId)))
        .orderBy(desc(domainChecks.checkedAt), desc(domainChecks.id))
        .limit(1)
      return (rows[0]?.posture as Posture | undefined) ?? null
    },

    /**
     * When the domain's rua started pointing here: the first check of the latest unbroken run of
     * checks whose record sends aggregate reports to this account (a check that could not read
     * DMARC neither breaks nor starts a run). Null when the latest run does not point here.
     */
    async ruaPointsHereSince(accountId: string, domainId: number): Promise<Date | null> {
      const failed = sql`c.posture->'issues' @> '[{"code":"dmarc.lookup_failed"}]'`
      const pointsHere = sql`(c.posture->>'dmarcPolicy' <> 'missing'
        and not c.posture->'issues' @> '[{"code":"dmarc.no_rua"}]'
        and not c.posture->'issues' @> '[{"code":"dmarc.reports_not_to_dmarcwatch"}]')`
      const rows = rowsOf<{ since: unknown }>(
        await db.execute(sql`select min(c.checked_at) as since from domain_checks c
          where c.account_id = ${accountId} and c.domain_id = ${domainId} and not ${failed} and ${pointsHere}
            and c.checked_at > coalesce((select max(c.checked_at) from domain_checks c
              where c.account_id = ${accountId} and c.domain_id = ${domainId}
                and not ${failed} and not ${pointsHere}), '-infinity'::timestamptz)`),
      )
      const since = rows[0]?.since
      return since === null || since === undefined ? null : toDate(since)
    },

    /**
     * Domains with aggregate figures on or after `fromDay`, or with an open alert of `types` (so
     * that an alert can clear once the figures behind it have aged out), across accounts. Probed
     * per domain, through the totals' (domain, day) key.
     */
    async domainsWithReports(fromDay: string, types: readonly AlertType[]): Promise<DomainRef[]> {
      const typeList = sql.join(
        types.map((type) => sql`${type}`),
        sql`, `,
      )
      return refs(
        rowsOf(
          await db.execute(sql`select d.account_id, d.id as domain_id from domains d
            where exists (select 1 from daily_domain_totals t
                where t.domain_id = d.id and t.account_id = d.account_id and t.day >= ${fromDay}::date)
              or exists (select 1 from alerts a
                where a.account_id = d.account_id and a.domain_id = d.id and a.status = 'open'
                  and a.type in (${typeList}))
            order by d.id`),
        ),
      )
    },

    /** The first day each IP was ever reported for the domain (not only within a window). */
    async firstSeen(
      accountId: string,
      domainId: number,
      ips: readonly string[],
    ): Promise<Map<string, string>> {
      if (ips.length === 0) return new Map()
      const rows = rowsOf<{ ip: string; first_seen: string }>(
        await db.execute(sql`select host(source_ip) as ip, to_char(min(day), 'YYYY-MM-DD') as first_seen
          from daily_rollups
          where account_id = ${accountId} and domain_id = ${domainId}
            and source_ip = any(${pgArray(ips)}::inet[])
          group by source_ip`),
      )
      return new Map(rows.map((r) => [String(r.ip), String(r.first_seen)]))
    },

    /**
     * When the last aggregate report for the domain arrived (received_at: its message's arrival, not
     * the time the job stored it); null when none is kept. Reports
     * covering the last 30 days are looked at first (a range of the (domain, begin) index: a busy
     * domain keeps many thousands of reports); older ones only when there are none.
     */
    async lastAggregateReportAt(accountId: string, domainId: number, now: Date): Promise<Date | null> {
      const recent = sql`and begin_at >= ${new Date(now.getTime() - 30 * 86_400_000).toISOString()}::timestamptz`
      for (const range of [recent, sql.empty()]) {
        const rows = rowsOf<{ at: unknown }>(
          await db.execute(sql`select max(received_at) as at from aggregate_reports
            where account_id = ${accountId} and domain_id = ${domainId} ${range}`),
        )
        const at = rows[0]?.at
        if (at !== null && at !== undefined) return toDate(at)
      }
      return null
    },

    /**
     * Keys (type + subject) of the domain's alerts the user resolved at or after `since`: a check
     * older than the user's decision must not open them again (the next check will, if the
     * condition still holds).
     */
    async userResolvedSince(
      accountId: string,
      domainId: number | null,
      types: readonly AlertType[],
      since: Date,
    ): Promise<{ type: AlertType; subject: string }[]> {
      if (types.length === 0) return []
      const rows = await db
        .selectDistinct({ type: alerts.type, subject: alerts.subject })
        .from(alerts)
        .where(
          and(
            eq(alerts.accountId, accountId),
            sameDomain(domainId),
            inArray(alerts.type, [...types]),
            eq(alerts.resolution, 'user'),
            gte(alerts.resolvedAt, since),
          ),
        )
      return rows as { type: AlertType; subject: string }[]
    },

    /**
     * The latest `details.evidence.<field>` timestamp among the domain's alerts of these types, of
     * any status: how far an event-type rule has already reported (see domain/alerts/evaluation.ts).
     */
    async latestEvidenceTime(
      accountId: string,
      domainId: number | null,
      types: readonly AlertType[],
      field: string,
      status?: 'open' | 'resolved',
    ): Promise<Date | null> {
      const rows = await db
        .select({
          // Epoch milliseconds: the drivers disagree on how they return a bare timestamptz.
          ms: sql<unknown>`round(extract(epoch from max((${alerts.details}->'evidence'->>${field})::timestamptz)) * 1000)::bigint`,
        })
        .from(alerts)
        .where(
          and(
            eq(alerts.accountId, accountId),
            sameDomain(domainId),
            inArray(alerts.type, [...types]),
            status === undefined ? undefined : eq(alerts.status, status),
          ),
        )
      const ms = rows[0]?.ms
      return ms === null || ms === undefined ? null : new Date(Number(ms))
    },
  }
}
