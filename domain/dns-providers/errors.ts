// One mapping from HTTP answers to the port's typed errors, shared by the HTTP adapters (PowerDNS,
// Cloudflare), so "401 means bad credentials" is decided once.

import type { ProviderError } from './ports.ts'

/** The typed error for a non-2xx HTTP status; `retryAfter` (seconds) only matters for 429. */
export function providerErrorForStatus(status: number, message: string, retryAfter?: number): ProviderError {
  if (status === 401) return { kind: 'bad_credentials', message }
  if (status === 403) return { kind: 'forbidden', message }
  if (status === 404) return { kind: 'not_found', message }
  if (status === 409) return { kind: 'conflict', message }
  if (status === 429)
    return { kind: 'rate_limited', message, ...(retryAfter === undefined ? {} : { retryAfter }) }
  if (status === 408 || status >= 500) return { kind: 'unavailable', message }
  return { kind: 'invalid', message }
}

/**
 * Seconds to wait from a Retry-After value: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * `nowMs` is passed in (domain code reads no clock); undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const at = Date.parse(trimmed)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, Math.ceil((at - nowMs) / 1000))
}
