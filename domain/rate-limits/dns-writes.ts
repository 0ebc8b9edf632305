import { fail, ok, type Result } from '../shared/result.ts'
import { consume, type RateLimitCounter } from './fixed-window.ts'

// DNS writes (SPF management, hosted DMARC, provider writes and imports) share one limit per
// account (docs/api.md "Authentication and limits": 10 per minute by default). Callers count a write only when a change is
// about to be saved: a call that changes nothing is no DNS write.

export const DNS_WRITES_SCOPE = 'dns_writes'

export type DnsWriteGate = (accountId: string) => Promise<Result<null>>

export function dnsWriteGate(deps: {
  counter: RateLimitCounter
  perMinute: number
  now: () => Date
}): DnsWriteGate {
  const policy = { scope: DNS_WRITES_SCOPE, limit: deps.perMinute, windowSeconds: 60 }
  return async (accountId) => {
    const decision = await consume(deps, { policy, subject: accountId, now: deps.now() })
    return decision.allowed ? ok(null) : fail({ code: 'rate_limited', retryAfter: decision.retryAfter })
  }
}
