import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ProviderError } from '../../domain/dns-providers/ports.ts'
import { createGuardedClient, type HttpClient } from '../http/guarded-client.ts'
import { OutboundError } from '../http/outbound-error.ts'

// The guarded HTTP client with the DNS provider APIs' limits (docs/outbound-http.md): PowerDNS and
// Cloudflare answers are JSON of a page of records or zones, far below the cap; a provider endpoint
// that streams more, stalls, redirects or answers junk is a provider failure (502
// `dns_provider_error`, docs/api.md), never a 500 and never unbounded memory.

/** A Cloudflare page of 500 records is ~300 KB; a PowerDNS zone of 50,000 records ~6 MB. */
export const PROVIDER_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
export const PROVIDER_CONNECT_TIMEOUT_MS = 10_000
export const PROVIDER_TOTAL_TIMEOUT_MS = 30_000

export interface ProviderHttpOptions {
  dns: DnsResolver
  /** WEBHOOK_ALLOW_PRIVATE: provider endpoints on private addresses (and plain http) allowed. */
  allowPrivate: boolean
  connectTimeoutMs?: number
  totalTimeoutMs?: number
  maxResponseBytes?: number
}

export function providerHttpClient(options: ProviderHttpOptions): HttpClient {
  return createGuardedClient({
    dns: options.dns,
    allowPrivate: options.allowPrivate,
    maxResponseBytes: options.maxResponseBytes ?? PROVIDER_MAX_RESPONSE_BYTES,
    connectTimeoutMs: options.connectTimeoutMs ?? PROVIDER_CONNECT_TIMEOUT_MS,
    totalTimeoutMs: options.totalTimeoutMs ?? PROVIDER_TOTAL_TIMEOUT_MS,
  })
}

const OUTBOUND_REASONS: Record<OutboundError['kind'], string> = {
  refused: 'is refused',
  unresolved: 'cannot be resolved',
  connect: 'is unreachable',
  timeout: 'timed out',
  too_large: 'sent an answer over the size limit',
  redirect: 'redirected (provider APIs are not followed elsewhere)',
}

/**
 * A request that did not bring an answer back: the provider failed, whatever the reason (a
 * redirect or an oversize answer is not something a user can fix with other settings either).
 * Anything that is not an OutboundError is a programming error and is thrown on.
 */
export function outboundFailure(label: string, error: unknown): ProviderError {
  if (!(error instanceof OutboundError)) throw error
  return { kind: 'unavailable', message: `${label} ${OUTBOUND_REASONS[error.kind]}: ${error.message}` }
}

/** An answer that is not what the provider's API documents (junk, wrong shape, `result: null`). */
export function malformed(label: string, what: string): ProviderError {
  return { kind: 'unavailable', message: `${label} sent a malformed answer: ${what}` }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
