// Expected failures travel as values with stable codes; plugins/errors.ts maps them to HTTP in one place.

export type Failure =
  | { code: 'validation_failed'; message: string; errors: Record<string, string[]> }
  | { code: 'invalid_token' }
  | { code: 'domain_not_found' }
  | { code: 'not_found'; resource: string }
  | { code: 'forbidden'; message: string }
  | { code: 'spf_lookup_limit_exceeded'; lookups: number; limit: number }
  | { code: 'dns_provider_authentication_failed'; provider: string }
  | { code: 'payload_too_large'; limit: number }
  | { code: 'rate_limited'; retryAfter: number }
  /** A test email asked for while this installation sends no notification mail (docs/notifications.md). */
  | { code: 'email_not_configured'; message: string }
  /** A proposal whose record changed at the DNS provider since it was made (docs/api.md, 409). */
  | { code: 'proposal_stale'; message: string }

export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure }

export const ok = <T>(value: T): Result<T> => ({ ok: true, value })
export const fail = <T = never>(failure: Failure): Result<T> => ({ ok: false, failure })

/** A validation failure on one field, in the validation error shape (docs/api.md "Errors"). */
export function invalid<T = never>(field: string, message: string): Result<T> {
  return fail({ code: 'validation_failed', message, errors: { [field]: [message] } })
}
