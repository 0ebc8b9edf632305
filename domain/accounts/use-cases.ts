import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding'
import { emailLookupKey, normalizeEmail } from '../shared/email-address.ts'
import type { RandomBytes } from '../shared/random.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { userActor } from './actor.ts'
import { hashToken, looksLikeToken, newTokenValue, tokenHint, tokenState } from './api-token.ts'
import type { AccountStore, TokenRecord, TokenStore } from './ports.ts'

export interface Principal {
  accountId: string
  userId: string
  tokenId: string
  /** What the principal's changes are recorded as (`user:<id>`). */
  actor: string
}

/** Bearer authentication (docs/api.md "Errors"): every unusable token gets the same `invalid_token` answer. */
export async function authenticateToken(
  deps: { tokens: Pick<TokenStore, 'findForAuth'> },
  input: { token: string | null; now: Date },
): Promise<Result<Principal>> {
  if (input.token === null || !looksLikeToken(input.token)) return fail({ code: 'invalid_token' })
  const found = await deps.tokens.findForAuth(hashToken(input.token), input.now)
  if (found === null || tokenState(found, input.now) !== 'active') return fail({ code: 'invalid_token' })
  return ok({
    accountId: found.accountId,
    userId: found.userId,
    tokenId: found.id,
    actor: userActor(found.userId),
  })
}

export const MIN_PASSWORD_LENGTH = 10

export async function createAccount(
  deps: { accounts: AccountStore; random: RandomBytes; hashPassword: (password: string) => Promise<string> },
  input: { email: string; password?: string },
): Promise<Result<{ accountId: string; userId: string; email: string; ingestKey: string }>> {
  const email = normalizeEmail(input.email)
  if (email === null) return invalid('email', 'Give a valid email address.')
  if (input.password !== undefined && input.password.length < MIN_PASSWORD_LENGTH) {
    return invalid('password', `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`)
  }
  const passwordHash = input.password === undefined ? null : await deps.hashPassword(input.password)
  // The ingest key is the local part of the account's report address (docs/ingestion.md): unguessable.
  const ingestKey = `r${encodeBase32LowerCaseNoPadding(deps.random(10))}`
  const created = await deps.accounts.createWithOwner({ email, passwordHash, ingestKey })
  if (created === 'email_taken') return invalid('email', 'An account with this email already exists.')
  return ok({ ...created, email })
}

export const MAX_TOKEN_LIFETIME_DAYS = 3650

export async function createToken(
  deps: { accounts: AccountStore; tokens: TokenStore; random: RandomBytes },
  input: { email: string; name: string; expiresInDays?: number; now: Date },
): Promise<Result<{ value: string; token: TokenRecord }>> {
  const name = input.name.trim()
  if (name === '' || name.length > 100) return invalid('name', 'A token needs a name of 1-100 characters.')
  const days = input.expiresInDays
  if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > MAX_TOKEN_LIFETIME_DAYS)) {
    return invalid('expires_in_days', `Give a whole number of days from 1 to ${MAX_TOKEN_LIFETIME_DAYS}.`)
  }
  const email = emailLookupKey(input.email)
  const member = email === null ? null : await deps.accounts.findMembershipByEmail(email)
  if (member === null) return fail({ code: 'not_found', resource: 'user' })
  const value = newTokenValue(deps.random(20))
  const token = await deps.tokens.insert({
    accountId: member.accountId,
    userId: member.userId,
    name,
    hash: hashToken(value),
    hint: tokenHint(value),
    expiresAt: days === undefined ? null : new Date(input.now.getTime() + days * 86_400_000),
  })
  return ok({ value, token })
}

/** Revokes by token value (what a leak exposes) or by id within an account. Idempotent. */
export async function revokeToken(
  deps: { tokens: TokenStore },
  input: { value?: string; accountId?: string; tokenId?: string; now: Date },
): Promise<Result<TokenRecord>> {
  let accountId = input.accountId
  let tokenId = input.tokenId
  if (input.value !== undefined) {
    const found = looksLikeToken(input.value) ? await deps.tokens.findByHash(hashToken(input.value)) : null
    if (found === null) return fail({ code: 'not_found', resource: 'token' })
    accountId = found.accountId
    tokenId = found.id
  }
  if (accountId === undefined || tokenId === undefined) return fail({ code: 'not_found', resource: 'token' })
  const revoked = await deps.tokens.revoke(accountId, tokenId, input.now)
  return revoked === null ? fail({ code: 'not_found', resource: 'token' }) : ok(revoked)
}
