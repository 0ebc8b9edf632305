import { timingSafeEqual } from 'node:crypto'

// The one reading of `Authorization: Bearer <token>` (RFC 6750 §2.1) and the one comparison of a
// bearer word with a configured secret. API tokens, the intake secret (INGEST_SECRET) and the
// metrics token (METRICS_TOKEN) all go through here (docs/api.md, "Authentication and limits").

/** The token of an `Authorization: Bearer <token>` header, or null when there is none. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match ? match[1]! : null
}

const sha256 = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest()

/**
 * A constant-time check of a bearer word against `secret` (null: nothing matches). Both sides are
 * hashed first, so neither the content nor the length of the secret shows in the timing.
 */
export function secretMatcher(secret: string | null): (given: string | null) => boolean {
  if (secret === null) return () => false
  const expected = sha256(secret)
  return (given) => timingSafeEqual(sha256(given ?? ''), expected) && given !== null
}
