import { sha256 } from '@oslojs/crypto/sha2'
import { encodeBase32LowerCaseNoPadding, encodeHexLowerCase } from '@oslojs/encoding'

// docs/api.md "Authentication and limits": a recognisable `dw_` prefix so leaked tokens are greppable; stored only as a hash.
// Tokens carry 160 random bits, so a plain SHA-256 (not a slow password hash) is the right lookup key.

export const TOKEN_PREFIX = 'dw_'
const TOKEN_SHAPE = /^dw_[a-z2-7]{32}$/

export function newTokenValue(random20Bytes: Uint8Array): string {
  if (random20Bytes.length !== 20) throw new Error('a token needs exactly 20 random bytes')
  return TOKEN_PREFIX + encodeBase32LowerCaseNoPadding(random20Bytes)
}

/** The shape check runs before any database work, so junk never costs a query. */
export function looksLikeToken(value: string): boolean {
  return TOKEN_SHAPE.test(value)
}

export function hashToken(value: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(value)))
}

/** What the API may show of a token after creation: enough to recognise it, useless to an attacker. */
export function tokenHint(value: string): string {
  return `${value.slice(0, 7)}…${value.slice(-4)}`
}

export type TokenState = 'active' | 'expired' | 'revoked'

export function tokenState(token: { expiresAt: Date | null; revokedAt: Date | null }, now: Date): TokenState {
  if (token.revokedAt !== null) return 'revoked'
  if (token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime()) return 'expired'
  return 'active'
}
