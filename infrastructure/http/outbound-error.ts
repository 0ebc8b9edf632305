// How an outbound request failed (infrastructure/http/guarded-client.ts, docs/outbound-http.md):
// each use maps the kind to its own outcome (a webhook attempt, a provider error, an OAuth failure).

export type OutboundFailureKind =
  /** The URL or its addresses are not allowed (scheme, SSRF rules), or the URL is malformed. */
  | 'refused'
  /** The host has no address (or resolving it failed): DNS may recover, so it is retryable. */
  | 'unresolved'
  /** The connection failed (refused, reset, TLS). */
  | 'connect'
  /** No status and headers within the connect deadline, or the exchange passed the total one. */
  | 'timeout'
  /** The body is larger than the use's cap. */
  | 'too_large'
  /** The server redirected and this use does not follow (or the hop limit was reached). */
  | 'redirect'

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailureKind,
    message: string,
  ) {
    super(message)
    this.name = 'OutboundError'
  }
}
