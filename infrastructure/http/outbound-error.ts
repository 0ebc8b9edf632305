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

/**
 * Why a connection or a body read failed, without any URL: Bun's fetch errors can name the URL
 * fetched (`… fetching "https://192.0.2.1/services/T0/B0/secret"`), which is the pinned address
 * with the whole path, and a Slack or Teams URL's path is its secret. The reason is stored and
 * shown (a delivery's last error, docs/notifications.md), so the URL is cut, and so is Bun's hint
 * to pass `verbose: true`, which means nothing to the reader.
 */
export function failureReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause
  const message =
    error instanceof Error
      ? cause instanceof Error
        ? `${error.message} (${cause.message})`
        : error.message
      : String(error)
  return message
    .replace(/\s*For more information, pass `verbose: true`[\s\S]*$/, '')
    .replace(/ fetching "[^"]*"/g, '')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>)]*/gi, '(the URL)')
    .slice(0, 300)
}
