import type { DnsResolver } from '../../domain/dns/ports.ts'
import { mtaStsPolicyUrl } from '../../domain/mail/mta-sts.ts'
import { createGuardedClient, type OutboundResponse } from './guarded-client.ts'
import { OutboundError } from './outbound-error.ts'

export type PolicyFetch = { status: 'ok'; text: string } | { status: 'unavailable'; reason: string }
export type MtaStsPolicyFetcher = (domain: string) => Promise<PolicyFetch>

// RFC 8461 §3.3: the policy is fetched over HTTPS with a valid certificate, redirects MUST NOT be
// followed, and the media type is text/plain. 64 KB is far above any real policy.
const MAX_POLICY_BYTES = 64 * 1024

export function createMtaStsFetcher(options: {
  dns: DnsResolver
  allowPrivate?: boolean
  timeoutMs?: number
  /** Test seam for a local HTTPS server with its own CA; production uses the system trust store. */
  tls?: { ca?: string }
  /** Test seam: where `mta-sts.<domain>` is reached (host:port), instead of port 443. */
  port?: number
}): MtaStsPolicyFetcher {
  const client = createGuardedClient({
    dns: options.dns,
    allowPrivate: options.allowPrivate ?? false,
    maxResponseBytes: MAX_POLICY_BYTES,
    connectTimeoutMs: options.timeoutMs ?? 10_000,
    totalTimeoutMs: options.timeoutMs ?? 10_000,
    ...(options.tls ? { tls: options.tls } : {}),
  })
  return async (domain) => {
    const url = new URL(mtaStsPolicyUrl(domain))
    if (options.port !== undefined) url.port = String(options.port)
    let response: OutboundResponse
    try {
      response = await client.request(url, {
        // The 3xx is an answer that is not 200, so it is refused below without being followed.
        redirect: 'manual',
        headers: { accept: 'text/plain', 'user-agent': 'dmarcwatch (MTA-STS policy check)' },
      })
    } catch (error) {
      if (error instanceof OutboundError && error.kind === 'too_large')
        return { status: 'unavailable', reason: 'the policy is larger than 64 KB' }
      if (error instanceof OutboundError && (error.kind === 'refused' || error.kind === 'unresolved'))
        return { status: 'unavailable', reason: error.message }
      return { status: 'unavailable', reason: `fetching ${url.href} failed: ${(error as Error).message}` }
    }
    if (response.status !== 200)
      return { status: 'unavailable', reason: `HTTP ${response.status} from ${url.origin}` }
    const type = response.headers.get('content-type') ?? ''
    if (!/^text\/plain\b/i.test(type))
      return { status: 'unavailable', reason: `media type "${type}" is not text/plain` }
    return { status: 'ok', text: response.text() }
  }
}
