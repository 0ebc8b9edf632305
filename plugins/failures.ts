import type { Failure, Result } from '../domain/shared/result.ts'

// The one place where expected failures become HTTP (docs/api.md "Errors", named scenarios).

export class FailureError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.code)
    this.name = 'FailureError'
  }
}

/** The success value, or a thrown FailureError that the error plugin maps to its JSON error body (docs/api.md). */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value
  throw new FailureError(result.failure)
}

export interface HttpFailure {
  status: number
  body: Record<string, unknown>
  headers?: Record<string, string>
}

const RESOURCE_NAMES: Record<string, string> = {
  alert: 'alert',
  organization: 'organization',
  source: 'source',
  provider: 'DNS provider',
  report: 'report',
  spf_version: 'SPF version',
  spf_proposal: 'SPF proposal',
  token: 'token',
  'embed key': 'embed key',
  'mail suppression': 'mail suppression',
  user: 'user',
}

export function toHttp(failure: Failure): HttpFailure {
  switch (failure.code) {
    case 'validation_failed':
      return { status: 400, body: { message: failure.message, errors: failure.errors } }
    case 'invalid_token':
      return {
        status: 401,
        body: {
          error: 'invalid_token',
          message:
            'The API token is missing, malformed, unknown, revoked or expired. Generate a new token under Settings → API Access.',
        },
        headers: { 'www-authenticate': 'Bearer realm="dmarcwatch", error="invalid_token"' },
      }
    case 'domain_not_found':
      return {
        status: 403,
        body: {
          error: 'domain_not_found',
          message: 'This domain is not in your account. Use the exact domain name as listed by GET /domains.',
        },
      }
    case 'not_found': {
      const what = RESOURCE_NAMES[failure.resource] ?? failure.resource
      return { status: 404, body: { error: 'not_found', message: `No such ${what} in your account.` } }
    }
    case 'forbidden':
      return { status: 403, body: { error: 'forbidden', message: failure.message } }
    case 'spf_lookup_limit_exceeded':
      return {
        status: 400,
        body: {
          error: 'spf_lookup_limit_exceeded',
          message: `The SPF record would need ${failure.lookups} DNS lookups; the limit is ${failure.limit}. Consolidate SPF sources or enable flattening.`,
          lookups: failure.lookups,
          limit: failure.limit,
        },
      }
    case 'dns_provider_authentication_failed':
      return {
        status: 400,
        body: {
          error: 'dns_provider_authentication_failed',
          message: `${failure.provider} rejected the credentials. Check the token at the provider and authenticate again.`,
          provider: failure.provider,
        },
      }
    case 'payload_too_large':
      return {
        status: 413,
        body: {
          error: 'payload_too_large',
          message: `The request body is larger than the limit of ${failure.limit} bytes.`,
          limit: failure.limit,
        },
      }
    case 'proposal_stale':
      // A 409 like `delivery_in_progress`: approving cannot succeed by retrying the same request,
      // the live record moved on (docs/api.md "DNS providers").
      return { status: 409, body: { error: 'proposal_stale', message: failure.message } }
    case 'rate_limited':
      return {
        status: 429,
        body: {
          error: `Rate limit exceeded. Retry in ${failure.retryAfter} seconds.`,
          retry_after: failure.retryAfter,
        },
        headers: { 'retry-after': String(failure.retryAfter) },
      }
    case 'email_not_configured':
      // 503: the installation cannot send it now (the API has no 409: docs/api.md, "Errors").
      return { status: 503, body: { error: 'email_not_configured', message: failure.message } }
  }
}
