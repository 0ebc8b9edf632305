import { expect, test } from 'bun:test'
import {
  hashToken,
  looksLikeToken,
  newTokenValue,
  tokenHint,
  tokenState,
} from '../../../domain/accounts/api-token.ts'
import { authenticateToken, createAccount } from '../../../domain/accounts/use-cases.ts'
import { normalizeEmail } from '../../../domain/shared/email-address.ts'

const bytes = (fill: number) => new Uint8Array(20).fill(fill)

test('tokens carry the dw_ prefix and 160 random bits in base32', () => {
  const value = newTokenValue(bytes(7))
  expect(value).toMatch(/^dw_[a-z2-7]{32}$/)
  expect(looksLikeToken(value)).toBe(true)
  expect(newTokenValue(bytes(8))).not.toBe(value)
  expect(() => newTokenValue(new Uint8Array(4))).toThrow()
})

test('the stored hash is SHA-256 hex and the hint hides the secret', () => {
  const value = newTokenValue(bytes(1))
  expect(hashToken(value)).toMatch(/^[0-9a-f]{64}$/)
  expect(hashToken(value)).toBe(hashToken(value))
  expect(tokenHint(value)).toBe(`${value.slice(0, 7)}…${value.slice(-4)}`)
})

test('token state: active, expired at the instant of expiry, revoked wins', () => {
  const now = new Date('2026-01-01T00:00:00Z')
  expect(tokenState({ expiresAt: null, revokedAt: null }, now)).toBe('active')
  expect(tokenState({ expiresAt: now, revokedAt: null }, now)).toBe('expired')
  expect(tokenState({ expiresAt: new Date(now.getTime() + 1), revokedAt: null }, now)).toBe('active')
  expect(tokenState({ expiresAt: null, revokedAt: now }, now)).toBe('revoked')
})

test('junk never reaches the token store', async () => {
  let lookups = 0
  const tokens = {
    findForAuth: async () => {
      lookups++
      return null
    },
  }
  for (const token of [null, '', 'Bearer', 'dw_short', `dw_${'A'.repeat(32)}`, `xx_${'a'.repeat(32)}`]) {
    const result = await authenticateToken({ tokens }, { token, now: new Date() })
    expect(result).toEqual({ ok: false, failure: { code: 'invalid_token' } })
  }
  expect(lookups).toBe(0)
})

test('an expired or revoked token found in the store is invalid', async () => {
  const now = new Date('2026-06-01T00:00:00Z')
  const base = {
    id: 't',
    accountId: 'a',
    userId: 'u',
    name: 'n',
    hint: 'h',
    lastUsedAt: null,
    createdAt: now,
  }
  for (const found of [
    { ...base, expiresAt: new Date('2026-05-01T00:00:00Z'), revokedAt: null },
    { ...base, expiresAt: null, revokedAt: new Date('2026-05-01T00:00:00Z') },
  ]) {
    const result = await authenticateToken(
      { tokens: { findForAuth: async () => found } },
      { token: newTokenValue(bytes(3)), now },
    )
    expect(result.ok).toBe(false)
  }
  const live = await authenticateToken(
    { tokens: { findForAuth: async () => ({ ...base, expiresAt: null, revokedAt: null }) } },
    { token: newTokenValue(bytes(3)), now },
  )
  // The principal carries the actor its changes are recorded as.
  expect(live).toEqual({ ok: true, value: { accountId: 'a', userId: 'u', tokenId: 't', actor: 'user:u' } })
})

test('emails are trimmed and lower-cased; passwords have a minimum length', async () => {
  expect(normalizeEmail('  Owner@Example.COM ')).toBe('owner@example.com')
  expect(normalizeEmail('not-an-email')).toBeNull()
  const accounts = {
    createWithOwner: async () => 'email_taken' as const,
    findMembershipByEmail: async () => null,
    ingestKeyOf: async () => null,
  }
  const deps = { accounts, random: (n: number) => new Uint8Array(n), hashPassword: async (p: string) => p }
  const short = await createAccount(deps, { email: 'a@b.co', password: 'short' })
  expect(short.ok).toBe(false)
  if (!short.ok && short.failure.code === 'validation_failed')
    expect(short.failure.errors.password).toBeArray()
  const taken = await createAccount(deps, { email: 'a@b.co' })
  expect(!taken.ok && taken.failure.code === 'validation_failed' && taken.failure.errors.email).toBeTruthy()
})
