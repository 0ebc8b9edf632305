import { and, count, desc, eq, gte, isNull, lt } from 'drizzle-orm'
import type { AlertCandidate, AlertSeverity } from '../../domain/alerts/alert.ts'
import {
  alertCreatedEvent,
  alertResolvedEvent,
  type OpenAlert,
  type ReconcilePlan,
  resolveByUser,
} from '../../domain/alerts/lifecycle.ts'
import type { AlertFilters, AlertStore, AppliedPlan, StoredAlert } from '../../domain/alerts/ports.ts'
import { offsetOf, type Page, type PageRequest } from '../../domain/shared/pagination.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import { markedText, withDamageMarked } from '../db/damaged-text.ts'
import type { Db } from '../db/database.ts'
import { alerts } from '../db/schema/alerts.ts'
import { domains } from '../db/schema/domains.ts'
import { appendEvent } from './pg-event-outbox.ts'

// Alerts (issue #6, docs/alerts.md). Every read and write is scoped by account; a domain id is only
// ever used together with its account. Each change and the events it sends are one transaction
// (the outbox pattern), so a rolled-back change sends nothing and a committed one is never silent.

const columns = {
  alertId: alerts.id,
  number: alerts.number,
  domain: domains.name,
  type: alerts.type,
  subject: alerts.subject,
  severity: alerts.severity,
  title: alerts.title,
  details: alerts.details,
  status: alerts.status,
  resolution: alerts.resolution,
  createdAt: alerts.createdAt,
  updatedAt: alerts.updatedAt,
  resolvedAt: alerts.resolvedAt,
}

// The domain join also carries the account, so a domain row can never leak across tenants.
const domainJoin = and(eq(domains.id, alerts.domainId), eq(domains.accountId, alerts.accountId))

const toAlert = (row: Record<string, unknown>): StoredAlert => row as unknown as StoredAlert

const sameDomain = (domainId: number | null) =>
  domainId === null ? isNull(alerts.domainId) : eq(alerts.domainId, domainId)

export function pgAlertStore(db: Db): AlertStore {
  /** The domain's name for event data, or undefined when the account has no such domain (deleted). */
  async function domainName(tx: Db, accountId: string, domainId: number | null) {
    if (domainId === null) return null
    const rows = await tx
      .select({ name: domains.name })
      .from(domains)
      .where(and(eq(domains.accountId, accountId), eq(domains.id, domainId)))
    return rows[0]?.name
  }

  async function get(accountId: string, number: number, tx: Db = db): Promise<StoredAlert | null> {
    const rows = await tx
      .select(columns)
      .from(alerts)
      .leftJoin(domains, domainJoin)
      .where(and(eq(alerts.accountId, accountId), eq(alerts.number, number)))
    return rows[0] === undefined ? null : toAlert(rows[0])
  }

  return {
    get,

    async numberOf(accountId: string, alertId: string) {
      if (!isUuid(alertId)) return null
      const rows = await db
        .select({ number: alerts.number })
        .from(alerts)
        .where(and(eq(alerts.accountId, accountId), eq(alerts.id, alertId.toLowerCase())))
      return rows[0]?.number ?? null
    },

    /** The open alerts of one domain (or the account-wide ones for null), as reconcile takes them. */
    async openAlerts(accountId: string, domainId: number | null): Promise<OpenAlert[]> {
      const rows = await db
        .select(columns)
        .from(alerts)
        .leftJoin(domains, domainJoin)
        .where(and(eq(alerts.accountId, accountId), sameDomain(domainId), eq(alerts.status, 'open')))
        .orderBy(alerts.createdAt, alerts.id)
      return rows.map((row) => toAlert(row))
    },

    /**
     * Applies a reconcile plan in one transaction with its events. An insert that meets an open
     * alert of the same key (another evaluation won the race; the partial unique index decides)
     * does nothing and sends nothing; so does an update or resolution of an alert no longer open.
     */
    async applyPlan(
      accountId: string,
      domainId: number | null,
      plan: ReconcilePlan,
      now: Date,
    ): Promise<AppliedPlan> {
      const applied: AppliedPlan = { created: 0, updated: 0, resolved: 0 }
      if (plan.create.length + plan.update.length + plan.resolve.length === 0) return applied
      await db.transaction(async (transaction) => {
        const tx = transaction as unknown as Db
        const domain = await domainName(tx, accountId, domainId)
        if (domain === undefined) return
        for (const { alertId, reason, resolvedAt } of plan.resolve) {
          const rows = await tx
            .update(alerts)
            .set({ status: 'resolved', resolution: reason, resolvedAt, updatedAt: now })
            .where(and(eq(alerts.accountId, accountId), eq(alerts.id, alertId), eq(alerts.status, 'open')))
            .returning({ number: alerts.number, severity: alerts.severity, title: alerts.title })
          const row = rows[0]
          if (row === undefined) continue
          applied.resolved += 1
          const severity = row.severity as AlertSeverity
          await appendEvent(
            tx,
            accountId,
            alertResolvedEvent({
              number: row.number,
              domain,
              severity,
              title: row.title,
              resolvedAt,
              reason,
            }),
          )
        }
        for (const { alertId, candidate } of plan.update) {
          const rows = await tx
            .update(alerts)
            .set({
              severity: candidate.severity,
              title: markedText(candidate.title),
              details: withDamageMarked(candidate.details),
              updatedAt: now,
            })
            .where(and(eq(alerts.accountId, accountId), eq(alerts.id, alertId), eq(alerts.status, 'open')))
            .returning({ id: alerts.id })
          applied.updated += rows.length
        }
        for (const candidate of plan.create) {
          const rows = await tx
            .insert(alerts)
            .values(insertValues(accountId, domainId, candidate, now))
            .onConflictDoNothing()
            .returning({ number: alerts.number })
          const row = rows[0]
          if (row === undefined) continue
          applied.created += 1
          await appendEvent(
            tx,
            accountId,
            alertCreatedEvent({ number: row.number, domain, ...candidate, createdAt: now }),
          )
        }
      })
      return applied
    },

    /** Newest first (then by id, so pages are stable). */
    async list(accountId: string, filters: AlertFilters, page: PageRequest): Promise<Page<StoredAlert>> {
      const where = and(
        eq(alerts.accountId, accountId),
        filters.status === undefined || filters.status === 'all'
          ? undefined
          : eq(alerts.status, filters.status),
        filters.severity === undefined ? undefined : eq(alerts.severity, filters.severity),
        filters.type === undefined ? undefined : eq(alerts.type, filters.type),
        filters.domain === undefined ? undefined : eq(domains.name, filters.domain),
        filters.since === undefined ? undefined : gte(alerts.createdAt, filters.since),
        filters.until === undefined ? undefined : lt(alerts.createdAt, filters.until),
      )
      const [rows, totals] = await Promise.all([
        db
          .select(columns)
          .from(alerts)
          .leftJoin(domains, domainJoin)
          .where(where)
          .orderBy(desc(alerts.createdAt), desc(alerts.id))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ total: count() }).from(alerts).leftJoin(domains, domainJoin).where(where),
      ])
      return { items: rows.map((row) => toAlert(row)), total: totals[0]?.total ?? 0 }
    },

    /**
     * The user resolves an alert: null when the account has no such alert. An alert already
     * resolved comes back unchanged and sends no second `alert.resolved` (docs/alerts.md); the row
     * lock makes two concurrent calls send one event.
     */
    async resolve(accountId: string, number: number, now: Date): Promise<StoredAlert | null> {
      return db.transaction(async (transaction) => {
        const tx = transaction as unknown as Db
        const locked = await tx
          .select({ status: alerts.status })
          .from(alerts)
          .where(and(eq(alerts.accountId, accountId), eq(alerts.number, number)))
          .for('update')
        const row = locked[0]
        if (row === undefined) return null
        const resolution = resolveByUser({ status: row.status as StoredAlert['status'] }, now)
        if (resolution !== null) {
          await tx
            .update(alerts)
            .set({
              status: 'resolved',
              resolution: resolution.reason,
              resolvedAt: resolution.resolvedAt,
              updatedAt: now,
            })
            .where(and(eq(alerts.accountId, accountId), eq(alerts.number, number)))
        }
        const alert = await get(accountId, number, tx)
        if (resolution !== null && alert !== null)
          await appendEvent(tx, accountId, alertResolvedEvent({ ...alert, ...resolution }))
        return alert
      })
    },
  }
}

function insertValues(accountId: string, domainId: number | null, candidate: AlertCandidate, now: Date) {
  return {
    accountId,
    domainId,
    type: candidate.type,
    // Titles and details quote DNS records and report values from outside: text a NUL or a lone
    // surrogate in them would fail the write with (infrastructure/db/damaged-text.ts). The subject
    // is a key open alerts are matched by, made of values already marked when read (selectors, IPs).
    subject: candidate.subject,
    severity: candidate.severity,
    title: markedText(candidate.title),
    details: withDamageMarked(candidate.details),
    status: 'open',
    createdAt: now,
    updatedAt: now,
  }
}
