// Events are written to the outbox in the same transaction as the change that caused them; the
// webhook deliverer sends them later. Names and data shapes follow docs/webhooks.md.

export type EventType =
  | 'alert.created'
  | 'alert.resolved'
  | 'domain.verified'
  | 'spf.activated'
  | 'dmarc.progressed'

export interface DomainEvent {
  type: EventType
  data: Record<string, unknown>
  occurredAt: Date
}

export function domainVerified(domain: string, at: Date): DomainEvent {
  return { type: 'domain.verified', data: { domain, verified_at: at.toISOString() }, occurredAt: at }
}

/**
 * SPF management activated for `domain`: `record` is the SPF record to publish at the domain (its
 * own record with `include:<hosted>` added), `include` the hosted name that include points at.
 */
export function spfActivated(domain: string, record: string, include: string, at: Date): DomainEvent {
  return { type: 'spf.activated', data: { domain, record, include }, occurredAt: at }
}

/**
 * The hosted DMARC policy of `domain` changed from `from` to `to` (docs/policy-progression.md): an advance by the
 * progression engine or an approved proposal, and also a rollback (then `to` is below `from`), so a
 * receiver of the webhook always knows the policy in force. Data exactly `{domain, from, to, reason}`.
 */
export function dmarcProgressed(
  domain: string,
  from: string,
  to: string,
  reason: string,
  at: Date,
): DomainEvent {
  return { type: 'dmarc.progressed', data: { domain, from, to, reason }, occurredAt: at }
}
