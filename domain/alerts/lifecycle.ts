import type { DomainEvent } from '../events/event.ts'
import {
  type AlertCandidate,
  type AlertDetails,
  type AlertSeverity,
  type AlertType,
  inScope,
  type RuleScope,
  USER_RESOLVED_TYPES,
} from './alert.ts'

// The alert lifecycle (docs/alerts.md, issue #6): one open alert per (domain, type, subject). A rule
// that keeps firing updates its open alert, and only when something shown changed; an alert whose
// rule ran and no longer fires resolves itself ("condition_cleared"); the user can resolve any
// alert ("user"). A resolved alert is never reopened: if its condition holds again (or still holds
// after the user resolved it), the next run opens a new alert with a new id, so each alert is one
// episode and its created/resolved events pair up.

export interface OpenAlert {
  /** The row's key (internal); the API, webhooks and mails name an alert by its `number`. */
  alertId: string
  /** null for account-wide alerts (webhook delivery, ingest quarantine). */
  domain: string | null
  type: AlertType
  subject: string
  severity: AlertSeverity
  title: string
  details: AlertDetails | Record<string, unknown>
}

export interface AlertScope extends RuleScope {
  /** The domain the candidates are about; null for the account-wide rules. */
  domain: string | null
}

export type ResolveReason = 'condition_cleared' | 'user'

export interface ReconcilePlan {
  /** Candidates with no open alert of their type and subject: insert, then send `alert.created`. */
  create: AlertCandidate[]
  /** Open alerts whose severity, title or details changed: no event (none is defined, docs/alerts.md). */
  update: { alertId: string; candidate: AlertCandidate }[]
  /** Open alerts in scope that no candidate matched: set resolved, then send `alert.resolved`. */
  resolve: { alertId: string; reason: 'condition_cleared'; resolvedAt: Date }[]
}

const keyOf = (type: string, subject: string) => `${type}\u0000${subject}`

/** Key order and undefined members do not count: details come back from a JSON column reordered. */
function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key]
      if (member !== undefined) out[key] = canonical(member)
    }
    return out
  }
  return value
}

const sameContent = (alert: OpenAlert, candidate: AlertCandidate) =>
  alert.severity === candidate.severity &&
  alert.title === candidate.title &&
  JSON.stringify(canonical(alert.details)) === JSON.stringify(canonical(candidate.details))

/**
 * What to do with the open alerts of `scope.domain` given this run's candidates. Open alerts of
 * other domains are ignored. An open alert with no candidate resolves only when its type (and
 * subject) is in the scope and it is not an event type (USER_RESOLVED_TYPES): a posture run must
 * not resolve report-based alerts, nor a DNS failure an alert about the record it failed to read.
 */
export function reconcile(
  open: readonly OpenAlert[],
  candidates: readonly AlertCandidate[],
  scope: AlertScope,
  now: Date,
): ReconcilePlan {
  const byKey = new Map<string, OpenAlert>()
  for (const alert of open) {
    if (alert.domain !== scope.domain) continue
    // Storage keeps one open alert per key; should two exist, the first is the one followed.
    const key = keyOf(alert.type, alert.subject)
    if (!byKey.has(key)) byKey.set(key, alert)
  }
  const plan: ReconcilePlan = { create: [], update: [], resolve: [] }
  const matched = new Set<string>()
  for (const candidate of candidates) {
    const key = keyOf(candidate.type, candidate.subject)
    if (matched.has(key)) throw new Error(`two candidates for ${candidate.type} "${candidate.subject}"`)
    matched.add(key)
    const alert = byKey.get(key)
    if (alert === undefined) plan.create.push(candidate)
    else if (!sameContent(alert, candidate)) plan.update.push({ alertId: alert.alertId, candidate })
  }
  for (const [key, alert] of byKey) {
    if (matched.has(key) || USER_RESOLVED_TYPES.includes(alert.type)) continue
    if (inScope(scope, alert.type, alert.subject))
      plan.resolve.push({ alertId: alert.alertId, reason: 'condition_cleared', resolvedAt: now })
  }
  return plan
}

/** A user resolving an alert: null when it is already resolved (no change, no second event, docs/alerts.md). */
export function resolveByUser(
  alert: { status: 'open' | 'resolved' },
  now: Date,
): { reason: 'user'; resolvedAt: Date } | null {
  return alert.status === 'resolved' ? null : { reason: 'user', resolvedAt: now }
}

/** `alert.created`: data exactly `{alert_id, domain, severity, title}` (docs/alerts.md). */
export function alertCreatedEvent(alert: {
  /** The alert's public id (`alert_id`: an integer, docs/alerts.md). */
  number: number
  domain: string | null
  severity: AlertSeverity
  title: string
  createdAt: Date
}): DomainEvent {
  return {
    type: 'alert.created',
    data: { alert_id: alert.number, domain: alert.domain, severity: alert.severity, title: alert.title },
    occurredAt: alert.createdAt,
  }
}

/**
 * `alert.resolved`: the created event's fields, plus when and why it was resolved, so a receiver
 * can close its ticket without fetching the alert: `{alert_id, domain, severity, title,
 * resolved_at, reason}`, reason `condition_cleared` or `user`.
 */
export function alertResolvedEvent(alert: {
  number: number
  domain: string | null
  severity: AlertSeverity
  title: string
  resolvedAt: Date
  reason: ResolveReason
}): DomainEvent {
  return {
    type: 'alert.resolved',
    data: {
      alert_id: alert.number,
      domain: alert.domain,
      severity: alert.severity,
      title: alert.title,
      resolved_at: alert.resolvedAt.toISOString(),
      reason: alert.reason,
    },
    occurredAt: alert.resolvedAt,
  }
}
