// What alert evaluation and the alerts API read and write (implemented by
// infrastructure/repositories/pg-alert-store.ts, pg-alert-facts.ts, pg-operations-facts.ts and
// pg-source-stats.ts). Every method about one domain takes its account too (tenant isolation).

import type { PolicyFigures } from '../policy/ports.ts'
import type { Posture, PostureFindings } from '../posture/posture.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import type { SourceStats } from '../sources/source-stats.ts'
import type { AlertSeverity, AlertType } from './alert.ts'
import type { OpenAlert, ReconcilePlan, ResolveReason } from './lifecycle.ts'
import type {
  FailingRead,
  FailingWrite,
  PendingSpfWrite,
  QuarantineFacts,
  WebhookFacts,
} from './rules/operations.ts'

/** An alert as the API shows it: the open alert's fields, and where it stands. */
export interface StoredAlert extends Omit<OpenAlert, 'details'> {
  /** The public id, `alert_id` (an integer, numbered across accounts; reads are scoped by account). */
  number: number
  details: Record<string, unknown>
  status: 'open' | 'resolved'
  resolution: ResolveReason | null
  createdAt: Date
  updatedAt: Date
  resolvedAt: Date | null
}

export interface AlertFilters {
  /** Default `all`. */
  status?: 'open' | 'resolved' | 'all'
  severity?: AlertSeverity
  /** A domain name (already normalised); account-wide alerts never match a domain. */
  domain?: string
  type?: AlertType
  /** created_at at or after. */
  since?: Date
  /** created_at before. */
  until?: Date
}

export interface AppliedPlan {
  created: number
  updated: number
  resolved: number
}

export interface AlertStore {
  /** By its public number; null for an unknown alert or another account's. */
  get(accountId: string, number: number): Promise<StoredAlert | null>
  /**
   * The number of the account's alert with this row key: a link written before alerts had numbers
   * (`/alerts/<uuid>` in an older mail) finds its alert. null for none, another account's, or no uuid.
   */
  numberOf(accountId: string, alertId: string): Promise<number | null>
  /** The open alerts of one domain (or the account-wide ones for null), as reconcile takes them. */
  openAlerts(accountId: string, domainId: number | null): Promise<OpenAlert[]>
  /** Applies a reconcile plan in one transaction with its events. */
  applyPlan(accountId: string, domainId: number | null, plan: ReconcilePlan, now: Date): Promise<AppliedPlan>
  list(accountId: string, filters: AlertFilters, page: PageRequest): Promise<Page<StoredAlert>>
  /** Resolves by the user (sending `alert.resolved`); an alert already resolved comes back unchanged. */
  resolve(accountId: string, number: number, now: Date): Promise<StoredAlert | null>
}

export interface DomainRef {
  accountId: string
  domainId: number
}

export interface AlertDomain {
  domainId: number
  name: string
  dmarcPolicy: 'none' | 'quarantine' | 'reject' | 'missing' | null
  verifiedAt: Date | null
  createdAt: Date
}

export interface CheckRow {
  checkedAt: Date
  posture: Posture
  findings: PostureFindings
}

/** Stored posture checks, the report figures' whereabouts, and how far event rules have reported. */
export interface AlertFacts {
  domain(accountId: string, domainId: number): Promise<AlertDomain | null>
  accountDomains(accountId: string): Promise<AlertDomain[]>
  /** Work for the scheduler: domains checked since `since`, across accounts. */
  domainsCheckedSince(since: Date): Promise<DomainRef[]>
  /** The domain's checks since `since`, oldest first, with the one before `since` if any. */
  checksSince(accountId: string, domainId: number, since: Date): Promise<CheckRow[]>
  latestPosture(accountId: string, domainId: number): Promise<Posture | null>
  ruaPointsHereSince(accountId: string, domainId: number): Promise<Date | null>
  /** Work for the scheduler: domains with reports from `fromDay` or open alerts of `types`. */
  domainsWithReports(fromDay: string, types: readonly AlertType[]): Promise<DomainRef[]>
  /** The first day each IP was ever reported for the domain (not only within a window). */
  firstSeen(accountId: string, domainId: number, ips: readonly string[]): Promise<Map<string, string>>
  lastAggregateReportAt(accountId: string, domainId: number, now: Date): Promise<Date | null>
  userResolvedSince(
    accountId: string,
    domainId: number | null,
    types: readonly AlertType[],
    since: Date,
  ): Promise<{ type: AlertType; subject: string }[]>
  latestEvidenceTime(
    accountId: string,
    domainId: number | null,
    types: readonly AlertType[],
    field: string,
    status?: 'open' | 'resolved',
  ): Promise<Date | null>
}

export interface NewFailureReport {
  id: string
  sourceIp: string | null
  /** When the report was stored. */
  reportedAt: Date
}

/** The figures of the operations alerts: webhook deliveries, the ingest quarantine, failure reports. */
export interface OperationsFacts {
  activeAccounts(): Promise<string[]>
  webhookFacts(accountId: string): Promise<WebhookFacts>
  quarantine(accountId: string, now: Date): Promise<QuarantineFacts>
  failureReportsAfter(accountId: string, domainId: number, after: Date | null): Promise<NewFailureReport[]>
  /** Records whose last provider write failed (docs/alerts.md, `dns_write_failing`). */
  failingWrites(accountId: string): Promise<FailingWrite[]>
  /** Provider connections whose last read failed (docs/alerts.md, `dns_provider_read_failing`). */
  failingReads(accountId: string): Promise<FailingRead[]>
  /** SPF writes retried or given up (docs/alerts.md, `spf_provider_write_failing`). */
  pendingSpfWrites(accountId: string, now: Date): Promise<PendingSpfWrite[]>
}

/** One source of a day, with the first day its IP was ever reported for the domain. */
export interface DaySource {
  stats: SourceStats
  /** YYYY-MM-DD, over all the stored days, not only this one. */
  firstSeen: string
}

/**
 * The day's sources as the report rules read them: a bounded page at a time, in IP order, so that
 * a day of 100,000 sources is never loaded at once (docs/alerts.md, "How the report rules read
 * their facts").
 */
export interface ReportSourceFacts {
  /** The domain's messages and source IPs on `day` (YYYY-MM-DD). */
  dayVolume(ref: DomainRef, day: string): Promise<{ messages: number; sources: number }>
  /**
   * At most `limit` of the day's sources with an IP after `afterIp` (all when null), in IP order;
   * left out are those no report rule can count (reports.ts, `summarize`): a DMARC pass, no owner's
   * verdict, and too few messages of the day's `volume` to be an unknown source on its own.
   */
  sourcePage(
    ref: DomainRef,
    day: string,
    page: { afterIp: string | null; limit: number; volume: number },
  ): Promise<DaySource[]>
}

/** The report figures the report rules read: the same daily rollups policy progression reads. */
export type AlertFigures = PolicyFigures
