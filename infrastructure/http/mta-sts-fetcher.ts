import type { DnsResolver } from '../../domain/dns/ports.ts'
import { mtaStsPolicyUrl } from '../../domain/mail/mta-sts.ts'
import { checkPublicHost } from './address-guard.ts'
import { pinnedFetch } from './pinned-fetch.ts'
import { readLimitedText } from './read-limited.ts'

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
  return async (domain) => {
    const url = new URL(mtaStsPolicyUrl(domain))
    if (options.port !== undefined) url.port = String(options.port)
    const host = await checkPublicHost(
      { dns: options.dns, allowPrivate: options.allowPrivate ?? false },
      url.hostname,
    )
    if (!host.ok) return { status: 'unavailable', reason: host.reason }
    try {
      const response = await pinnedFetch(url, host.addresses[0]!, {
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        headers: { accept: 'text/plain', 'user-agent': 'dmarcwatch (MTA-STS policy check)' },
        ...(options.tls ? { tls: options.tls } : {}),
      })
      if (response.status !== 200) {
        await response.body?.cancel()
        return { status: 'unavailable', reason: `HTTP ${response.status} from ${url.origin}` }
      }
      const type = response.headers.get('content-type') ?? ''
      const { text, truncated } = await readLimitedText(response, MAX_POLICY_BYTES)
      if (truncated) return { status: 'unavailable', reason: 'the policy is larger than 64 KB' }
      if (!/^text\/plain\b/i.test(type))
        return { status: 'unavailable', reason: `media type "${type}" is not text/plain` }
      return { status: 'ok', text }
    } catch (error) {
      return { status: 'unavailable', reason: `fetching ${url.href} failed: ${(error as Error).message}` }
    }
  }
}
