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
