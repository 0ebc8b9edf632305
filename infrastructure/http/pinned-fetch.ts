import { isIP } from 'node:net'

/**
 * Fetches `url` from a given, already vetted address instead of letting fetch resolve the host again:
 * the Host header and the TLS server name (SNI and certificate check) stay the URL's host. Without
 * pinning, a host could resolve to a public address for the SSRF check and to an internal one for
 * the request (DNS rebinding).
 */
export function pinnedFetch(
  url: URL,
  address: string,
  init: RequestInit & { tls?: Record<string, unknown> },
): Promise<Response> {
  const target = new URL(url)
  const host = url.host
  target.hostname = isIP(address) === 6 ? `[${address}]` : address
  const headers = new Headers(init.headers)
  headers.set('host', host)
  const tls = url.protocol === 'https:' ? { ...init.tls, serverName: url.hostname } : init.tls
  return fetch(target, { ...init, headers, ...(tls ? { tls } : {}) } as RequestInit)
}
