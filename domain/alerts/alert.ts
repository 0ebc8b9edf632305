import type { Fix } from '../posture/posture.ts'
import type { Severity } from '../shared/finding.ts'

// Alerts (issue #6, docs/alerts.md): pure rules turn what a check, the reports or the intake found into
// candidates; lifecycle.ts reconciles candidates with the open alerts. docs/alerts.md has the table.

/** The one severity scale of findings, posture issues and alerts. */
export type AlertSeverity = Severity

/** Stable snake_case rule ids: the alert's `type`. Never rename one; API filters and clients key on them. */
export const ALERT_TYPES = [
  'dmarc_missing',
  'dmarc_invalid',
  'dmarc_weakened',
  'spf_missing',
  'spf_permerror',
  'spf_too_many_lookups',
  'spf_void_lookups',
  'spf_permissive_all',
  'dkim_selector_revoked',
  'dkim_weak_key',
  'dkim_missing',
  'dns_record_changed',
  'dns_record_removed',
  'dmarc_failure_rate',
  'new_unknown_source',
  'spoofing_attempt',
  'failure_report_received',
  'no_reports',
  'webhook_delivery_failing',
  'ingest_quarantine_growing',
  'dns_write_failing',
  'dns_provider_read_failing',
] as const

export type AlertType = (typeof ALERT_TYPES)[number]

export function isAlertType(value: string): value is AlertType {
  return (ALERT_TYPES as readonly string[]).includes(value)
}

/**
 * Alerts about something that happened rather than a state that holds: there is no condition that
 * could "clear", so they never resolve themselves; the user resolves them. While one is open, the
 * same event again updates it instead of opening another.
 */
export const USER_RESOLVED_TYPES: readonly AlertType[] = [
  'dmarc_weakened',
  'dns_record_changed',
  'failure_report_received',
]

export interface AlertDetails {
  /** The figures and records the alert is based on (JSON values only: stored as JSON). */
  evidence: Record<string, unknown>
  /** What to do about it, in one or two sentences. */
  remedy: string
  /** The exact DNS record to publish, when the posture check knows it. */
  fix?: Fix
  [key: string]: unknown
}

/** What a rule found: an alert to open, or to update when one is open for the same type and subject. */
export interface AlertCandidate {
  type: AlertType
  /** Tells alerts of one type apart within a domain (`s1` for a DKIM selector, `ip:192.0.2.1`); '' when one per domain. */
  subject: string
  severity: AlertSeverity
  title: string
  details: AlertDetails
}

/** Restricts the subjects of one type that a run evaluated (see RuleScope). */
export type SubjectFilter = { only: readonly string[] } | { except: readonly string[] }

/**
 * What a run of rules evaluated: only open alerts inside it may resolve themselves for want of a
 * candidate. A posture check says nothing about reports, and a DNS failure says nothing about the
 * record it failed to read, so neither may clear an alert.
 */
export interface RuleScope {
  rulesEvaluated: readonly AlertType[]
  /** Per type, the subjects evaluated; a type without a filter had all its subjects evaluated. */
  subjects?: Partial<Record<AlertType, SubjectFilter>>
}

export function inScope(scope: RuleScope, type: AlertType, subject: string): boolean {
  if (!scope.rulesEvaluated.includes(type)) return false
  const filter = scope.subjects?.[type]
  if (filter === undefined) return true
  return 'only' in filter ? filter.only.includes(subject) : !filter.except.includes(subject)
}

/** The scopes of several rule families run together. Families evaluate disjoint types. */
export function mergeScopes(...scopes: readonly RuleScope[]): RuleScope {
  const rulesEvaluated: AlertType[] = []
  const subjects: Partial<Record<AlertType, SubjectFilter>> = {}
  for (const scope of scopes) {
    for (const type of scope.rulesEvaluated) {
      if (rulesEvaluated.includes(type)) throw new Error(`${type} is evaluated by two rule families`)
      rulesEvaluated.push(type)
      const filter = scope.subjects?.[type]
      if (filter !== undefined) subjects[type] = filter
    }
  }
  return { rulesEvaluated, subjects }
}

/** Evidence lists keep the heaviest entries only; the rest are counted. */
export const EVIDENCE_LIST_LIMIT = 20

/** A rate as stored in evidence: four decimals, so a stored and a recomputed value compare equal. */
export const roundRate = (value: number): number => Math.round(value * 10_000) / 10_000
