import { type SQL, sql } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import type {
  ForensicFilter,
  ForensicTlsStore,
  StoredTlsReport,
} from '../../domain/reports/failure-tls-reads.ts'
import type { ForensicReport } from '../../domain/reports/forensic.ts'
import type { TlsRptReport } from '../../domain/reports/tls-rpt.ts'
import { countedSessions } from '../../domain/reports/tls-sessions.ts'
import { offsetOf, type PageRequest } from '../../domain/shared/pagination.ts'
import { withDamageMarked } from '../db/damaged-text.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { enqueueOperationsAlerts } from '../queue/alert-triggers.ts'

// Failure (forensic) and TLS-RPT reports: small, stored whole as JSON with the fields that filters
// and summaries need as columns. Both deduplicate: a report stored once is acknowledged after that.

const isoOf = (value: unknown) => new Date(value instanceof Date ? value : String(value)).toISOString()

/**
 * A report's begin or end as ISO 8601 text, written by PostgreSQL: a report may name the years
 * 0001-0099 (domain/reports/tls-rpt.ts), which the drivers' `new Date("0050-06-01 00:00:00+00")`
 * reads as 1950.
 */
const utcText = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** A report's received_at: when its message arrived (docs/ingestion.md); without one, now. */
const receivedAt = (messageId: string | null) =>
  sql`coalesce((select m.received_at from ingest_messages m where m.id = ${messageId}::uuid), now())`

/**
 * With the process's queue, a stored failure report enqueues its account's operations rules
 * (`failure_report_received`), debounced (infrastructure/queue/alert-triggers.ts), after the commit.
 */
export function pgForensicTlsStore(db: Db, boss: PgBoss | null = null): ForensicTlsStore {
  return {
    /** Redaction is on unless the account turned it off (account_settings; no row: the default). */
    async redactsForensic(accountId: string): Promise<boolean> {
      const rows = rowsOf<{ redact: boolean }>(
        await db.execute(
          sql`select redact_forensic as redact from account_settings where account_id = ${accountId}`,
        ),
      )
      return rows[0]?.redact ?? true
    },

    async insertForensic(input: {
      accountId: string
      domainId: number
      messageId: string | null
      contentHash: string
      report: ForensicReport
    }): Promise<{ status: 'stored' | 'duplicate'; id: number }> {
      const r = withDamageMarked(input.report)
      const inserted = rowsOf<{ id: string }>(
        await db.execute(sql`insert into forensic_reports (account_id, domain_id, message_id, content_hash, arrival_at,
            source_ip, reported_domain, auth_failure, delivery_result, redacted, report, received_at)
          values (${input.accountId}, ${input.domainId}, ${input.messageId}, ${input.contentHash},
            ${r.arrivalTime === null ? null : new Date(r.arrivalTime * 1000).toISOString()}::timestamptz,
            ${r.sourceIp}::inet, ${r.reportedDomains[0] ?? null}, ${r.authFailure}, ${r.deliveryResult},
            ${r.localPartsRedacted}, ${JSON.stringify(r)}::jsonb, ${receivedAt(input.messageId)})
          on conflict do nothing returning id`),
      )
      if (inserted[0] !== undefined) {
        if (boss !== null) await enqueueOperationsAlerts(boss, input.accountId)
        return { status: 'stored', id: Number(inserted[0].id) }
      }
      const existing = rowsOf<{ id: string }>(
        await db.execute(
          sql`select id from forensic_reports where account_id = ${input.accountId} and content_hash = ${input.contentHash}`,
        ),
      )
      return { status: 'duplicate', id: Number(existing[0]?.id ?? 0) }
    },

    async listForensic(accountId: string, filter: ForensicFilter, page: PageRequest) {
      const where = sql.join(
        [
          sql`f.account_id = ${accountId}`,
          filter.domainId === undefined ? undefined : sql`f.domain_id = ${filter.domainId}`,
          filter.since === undefined
            ? undefined
            : sql`coalesce(f.arrival_at, f.received_at) >= ${filter.since.toISOString()}::timestamptz`,
          filter.until === undefined
            ? undefined
            : sql`coalesce(f.arrival_at, f.received_at) < ${filter.until.toISOString()}::timestamptz`,
          filter.sourceIp === undefined ? undefined : sql`f.source_ip = ${filter.sourceIp}::inet`,
        ].filter((part) => part !== undefined),
        sql` and `,
      )
      const [rows, totals] = await Promise.all([
        db.execute(sql`select f.id, d.name as domain, f.arrival_at, host(f.source_ip) as source_ip, f.reported_domain,
            f.auth_failure, f.delivery_result, f.redacted, f.report, f.created_at, f.received_at
          from forensic_reports f join domains d on d.id = f.domain_id
          where ${where} order by coalesce(f.arrival_at, f.received_at) desc, f.id desc
          limit ${page.perPage} offset ${offsetOf(page)}`),
        db.execute(sql`select count(*)::int as n from forensic_reports f where ${where}`),
      ])
      return {
        items: rowsOf<Record<string, unknown>>(rows),
        total: Number(rowsOf<{ n: number }>(totals)[0]?.n ?? 0),
      }
    },

    async forensic(accountId: string, id: number) {
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select f.id, d.name as domain, f.arrival_at, host(f.source_ip) as source_ip, f.reported_domain,
            f.auth_failure, f.delivery_result, f.redacted, f.report, f.created_at, f.received_at
          from forensic_reports f join domains d on d.id = f.domain_id
          where f.account_id = ${accountId} and f.id = ${id}`),
      )
      return rows[0] ?? null
    },

    async insertTls(input: {
      accountId: string
      domainId: number
      messageId: string | null
      report: TlsRptReport
    }): Promise<{ status: 'stored' | 'duplicate'; id: number }> {
      const r = withDamageMarked(input.report)
      const { successful: success, failed: failure } = countedSessions(r.policies)
      const inserted = rowsOf<{ id: string }>(
        await db.execute(sql`insert into tls_reports (account_id, domain_id, message_id, organization, report_id,
            begin_at, end_at, success_count, failure_count, report, received_at)
          values (${input.accountId}, ${input.domainId}, ${input.messageId}, ${r.organizationName}, ${r.reportId},
            to_timestamp(${r.begin}), to_timestamp(${r.end}), ${success}, ${failure}, ${JSON.stringify(r)}::jsonb,
            ${receivedAt(input.messageId)})
          on conflict do nothing returning id`),
      )
      if (inserted[0] !== undefined) return { status: 'stored', id: Number(inserted[0].id) }
      const existing = rowsOf<{ id: string }>(
        await db.execute(sql`select id from tls_reports where account_id = ${input.accountId} and domain_id = ${input.domainId}
          and lower(organization) = lower(${r.organizationName}) and report_id = ${r.reportId}`),
      )
      return { status: 'duplicate', id: Number(existing[0]?.id ?? 0) }
    },

    /** One TLS-RPT report of the account with its domain's name and the report as stored; null if none. */
    async tlsReport(accountId: string, id: number): Promise<StoredTlsReport | null> {
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select t.id, d.name as domain, t.organization, t.report_id,
            ${utcText(sql`t.begin_at`)} as begin_at, ${utcText(sql`t.end_at`)} as end_at,
            t.success_count, t.failure_count, t.report, t.created_at, t.received_at
          from tls_reports t join domains d on d.id = t.domain_id
          where t.account_id = ${accountId} and t.id = ${id}`),
      )
      const row = rows[0]
      if (row === undefined) return null
      return {
        id: Number(row.id),
        domain: String(row.domain),
        organization: String(row.organization),
        report_id: String(row.report_id),
        begin_at: String(row.begin_at),
        end_at: String(row.end_at),
        success_count: Number(row.success_count),
        failure_count: Number(row.failure_count),
        // jsonb arrives parsed; text is parsed too, should a driver hand the column over as such.
        report: (typeof row.report === 'string' ? JSON.parse(row.report) : row.report) as TlsRptReport,
        created_at: isoOf(row.created_at),
        received_at: isoOf(row.received_at),
      }
    },

    /** TLS-RPT for a domain over a period: totals, per-day counts, and the failure types seen. */
    async tlsSummary(accountId: string, domainId: number, from: string, to: string) {
      const range = sql`account_id = ${accountId} and domain_id = ${domainId}
        and begin_at < (${to}::date + 1) and end_at >= ${from}::date`
      const [totals, daily, failures, reports] = await Promise.all([
        db.execute(sql`select coalesce(sum(success_count), 0) as success, coalesce(sum(failure_count), 0) as failure,
            count(*)::int as reports from tls_reports where ${range}`),
        db.execute(sql`select to_char(begin_at::date, 'YYYY-MM-DD') as day, sum(success_count) as success,
            sum(failure_count) as failure from tls_reports where ${range} group by 1 order by 1`),
        // Not an sts policy beside a tlsa one: its sessions are the tlsa one's (domain/reports/tls-sessions.ts).
        db.execute(sql`select fd->>'resultType' as result_type, sum((fd->>'failedSessionCount')::bigint) as sessions
          from tls_reports, jsonb_array_elements(report->'policies') p, jsonb_array_elements(p->'failureDetails') fd
          where ${range} and not (p->>'policyType' = 'sts' and report->'policies' @> '[{"policyType": "tlsa"}]')
          group by 1 order by 2 desc limit 20`),
        db.execute(sql`select id, organization, report_id, ${utcText(sql`begin_at`)} as begin_at,
            ${utcText(sql`end_at`)} as end_at, success_count, failure_count
          from tls_reports where ${range} order by begin_at desc limit 50`),
      ])
      const total = rowsOf<Record<string, unknown>>(totals)[0] ?? {}
      return {
        totals: {
          successful_sessions: Number(total.success ?? 0),
          failed_sessions: Number(total.failure ?? 0),
          reports: Number(total.reports ?? 0),
        },
        daily: rowsOf<Record<string, unknown>>(daily).map((d) => ({
          day: String(d.day),
          successful_sessions: Number(d.success),
          failed_sessions: Number(d.failure),
        })),
        failure_types: rowsOf<Record<string, unknown>>(failures).map((f) => ({
          result_type: String(f.result_type),
          sessions: Number(f.sessions),
        })),
        reports: rowsOf<Record<string, unknown>>(reports).map((r) => ({
          id: Number(r.id),
          organization: String(r.organization),
          report_id: String(r.report_id),
          begin: String(r.begin_at),
          end: String(r.end_at),
          successful_sessions: Number(r.success_count),
          failed_sessions: Number(r.failure_count),
        })),
      }
    },
  }
}
