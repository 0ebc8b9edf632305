import { sql } from 'drizzle-orm'
import type { NewFailureReport, OperationsFacts } from '../../domain/alerts/ports.ts'
import type {
  FailingRead,
  FailingWrite,
  QuarantineFacts,
  WebhookFacts,
} from '../../domain/alerts/rules/operations.ts'
import { type Db, rowsOf } from '../db/database.ts'

// The figures of the operations alerts (is dmarcwatch itself still hearing and telling?): webhook
// deliveries, the ingest quarantine, failure reports. All scoped by account.

const DAY_MS = 86_400_000
const toDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))
const dateOrNull = (value: unknown) => (value === null || value === undefined ? null : toDate(value))

export function pgOperationsFacts(db: Db): OperationsFacts {
  return {
    /**
     * Accounts with anything the operations rules read or may clear: domains, quarantined
     * messages, webhook deliveries, open account-wide alerts. Accounts with none are skipped.
     */
    async activeAccounts(): Promise<string[]> {
      const rows = rowsOf<{ id: string }>(
        await db.execute(sql`select a.id from accounts a
          where exists (select 1 from domains d where d.account_id = a.id)
            or exists (select 1 from ingest_messages m where m.account_id = a.id and m.status = 'quarantined')
            or exists (select 1 from webhook_deliveries w where w.account_id = a.id)
            or exists (select 1 from alerts x where x.account_id = a.id and x.status = 'open')
          order by a.id`),
      )
      return rows.map((r) => String(r.id))
    },

    /**
     * Deliveries marked failed (docs/webhooks.md: after the fifth attempt) since the last one that was
     * delivered, the newest failure, and what its last attempt ended with.
     */
    async webhookFacts(accountId: string): Promise<WebhookFacts> {
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`with since as (
            select coalesce(max(updated_at), '-infinity'::timestamptz) as at from webhook_deliveries
            where account_id = ${accountId} and status = 'delivered'
          ), failing as (
            select id, updated_at from webhook_deliveries, since
            where account_id = ${accountId} and status = 'failed' and updated_at > since.at
          ), newest as (
            select id from failing order by updated_at desc, id desc limit 1
          )
          select (select count(*) from failing) as failing,
            (select max(updated_at) from failing) as last_failure_at,
            (select a.outcome from webhook_attempts a join newest n on n.id = a.delivery_id
              order by a.attempt desc limit 1) as last_error`),
      )
      const row = rows[0] ?? {}
      return {
        failingDeliveries: Number(row.failing ?? 0),
        lastFailureAt: dateOrNull(row.last_failure_at),
        lastError: (row.last_error as string | null | undefined) ?? null,
      }
    },

    /**
     * Record sets whose latest write through a DNS provider failed (dns_provider_writes: a write
     * that was refused, or that the provider did not hold as sent).
     */
    async failingWrites(accountId: string): Promise<FailingWrite[]> {
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select * from (
            select distinct on (name, type) domain_name, name, type, after, actor, error, status, created_at
            from dns_provider_writes where account_id = ${accountId}
            order by name, type, created_at desc, id desc
          ) latest where status = 'failed' order by name, type`),
      )
      return rows.map((row) => ({
        domain: String(row.domain_name),
        name: String(row.name),
        type: String(row.type),
        values: ((row.after as { values?: string[] } | null)?.values ?? []).map(String),
        actor: String(row.actor),
        error: (row.error as string | null) ?? null,
        at: toDate(row.created_at),
      }))
    },

    /** Connections whose last read failed (domain/dns-providers/read-health.ts). */
    async failingReads(accountId: string): Promise<FailingRead[]> {
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select id, provider, name, read_error, read_failed_at from dns_provider_connections
          where account_id = ${accountId} and read_failed_at is not null order by created_at, id`),
      )
      return rows.map((row) => ({
        connectionId: String(row.id),
        provider: String(row.provider),
        name: String(row.name),
        error: (row.read_error as string | null) ?? null,
        at: toDate(row.read_failed_at),
      }))
    },

    /**
     * Messages in quarantine now, and those of them already there 24 hours ago (quarantined at
     * processing time; a message refused at intake counts from its arrival). Messages retried out
     * of the quarantine since are in neither count.
     */
    async quarantine(accountId: string, now: Date): Promise<QuarantineFacts> {
      const dayAgo = new Date(now.getTime() - DAY_MS).toISOString()
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select count(*) as now,
            count(*) filter (where coalesce(processed_at, received_at) <= ${dayAgo}::timestamptz) as day_ago
          from ingest_messages where account_id = ${accountId} and status = 'quarantined'`),
      )
      return { quarantined: { now: Number(rows[0]?.now ?? 0), dayAgo: Number(rows[0]?.day_ago ?? 0) } }
    },

    /**
     * Failure reports of the domain stored after `after` (all kept ones when null), newest first.
     * Compared at millisecond precision: `after` comes back from an alert's evidence, which holds
     * JavaScript dates, and a report must not count again for its microseconds.
     */
    async failureReportsAfter(
      accountId: string,
      domainId: number,
      after: Date | null,
    ): Promise<NewFailureReport[]> {
      const rows = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select id, host(source_ip) as source_ip, created_at from forensic_reports
          where account_id = ${accountId} and domain_id = ${domainId}
            and date_trunc('milliseconds', created_at) > ${after?.toISOString() ?? '-infinity'}::timestamptz
          order by created_at desc, id desc`),
      )
      return rows.map((r) => ({
        id: String(r.id),
        sourceIp: (r.source_ip as string | null) ?? null,
        reportedAt: toDate(r.created_at),
      }))
    },
  }
}
