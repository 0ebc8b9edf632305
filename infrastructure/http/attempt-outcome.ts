import type { AttemptOutcome } from '../../domain/webhooks/schedule.ts'
import { failureReason, OutboundError } from './outbound-error.ts'

/**
 * A failed webhook or chat attempt as its outcome: a refusal by the SSRF rules is `blocked`, a
 * deadline a `timeout`, the rest a connection error whose reason names no URL (failureReason).
 */
export function failedAttempt(error: unknown): AttemptOutcome {
  if (!(error instanceof OutboundError)) return { kind: 'connection_error', message: failureReason(error) }
  switch (error.kind) {
    case 'refused':
      return { kind: 'blocked', reason: error.message }
    case 'timeout':
      return { kind: 'timeout' }
    default:
      return { kind: 'connection_error', message: error.message }
  }
}
