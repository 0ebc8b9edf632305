// Events are written to the outbox in the same transaction as the change that caused them; the
// webhook deliverer sends them later. Names and data shapes follow the contract (§4, §5).

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
