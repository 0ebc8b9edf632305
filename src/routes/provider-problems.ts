import type { Outcome, ProviderProblem } from '../../domain/dns-providers/use-cases.ts'
import type { Result } from '../../domain/shared/result.ts'
import { unwrap } from '../../plugins/failures.ts'

// A provider that fails has no code of its own in the API reference: 502 `dns_provider_error` (docs/api.md "DNS
// providers"), shared by every route that writes through a provider.

export function problemBody(p: ProviderProblem) {
  return {
    error: 'dns_provider_error' as const,
    message: p.message,
    provider: p.provider,
    kind: p.kind,
    ...(p.retryAfter === undefined ? {} : { retry_after: p.retryAfter }),
    ...(p.writeId === undefined ? {} : { write_id: p.writeId }),
  }
}

export type Settled<T> = { ok: true; value: T } | { ok: false; problem: ReturnType<typeof problemBody> }

/** A use case's outcome: the value, a provider problem (502), or a failure thrown for the mapper. */
export function settle<T>(outcome: Outcome<T>): Settled<T> {
  if (outcome.ok) return outcome
  if (outcome.failure.code === 'dns_provider_error')
    return { ok: false, problem: problemBody(outcome.failure) }
  return { ok: true, value: unwrap(outcome as Result<T>) }
}
