import { sha256 } from '@oslojs/crypto/sha2'
import { encodeBase64urlNoPadding, encodeHexLowerCase } from '@oslojs/encoding'
import { emailLookupKey } from '../shared/email-address.ts'
import type { RandomBytes } from '../shared/random.ts'
import { invalid, type Result } from '../shared/result.ts'
import {
  type ClientFacts,
  type CredentialStore,
  type PasswordHasher,
  passwordProblem,
} from './password-login.ts'
import { type SessionStore, type StartedSession, startSession } from './sessions.ts'

// Password reset by emailed link: the answer to a request is the same whether or not the email has
// an account (no enumeration); the link is single use, expires after an hour, and using it ends
// every session of the user.

export const RESET_LIFETIME_MS = 3_600_000

export interface PasswordResetStore {
  insert(reset: { tokenHash: string; userId: string; createdAt: Date; expiresAt: Date }): Promise<void>
  /** The user of a token that can still be used at `now` (unused, unexpired), or null. */
  usableBy(tokenHash: string, now: Date): Promise<string | null>
  /**
   * Marks the token used if it is unused and unexpired, atomically (two concurrent uses: one wins),
   * and voids the user's other open tokens. Returns the user, or null.
   */
  consume(tokenHash: string, now: Date): Promise<string | null>
}

export interface ResetMail {
  to: string
  /** Goes into the link; never stored. */
  token: string
  expiresAt: Date
}

// 32 random bytes, base64url.
export const ONE_TIME_TOKEN = /^[A-Za-z0-9_-]{43}$/

export function hashResetToken(token: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(token)))
}

/**
 * A one-time token for `userId` (reset links, sign-in links): 32 random bytes, base64url, stored
 * only as its hash, valid for `lifetimeMs`. Returns the token for the link and its expiry.
 */
export async function issueUserToken(
  deps: { store: Pick<PasswordResetStore, 'insert'>; random: RandomBytes },
  input: { userId: string; now: Date; lifetimeMs: number },
): Promise<{ token: string; expiresAt: Date }> {
  const token = encodeBase64urlNoPadding(deps.random(32))
  const expiresAt = new Date(input.now.getTime() + input.lifetimeMs)
  await deps.store.insert({
    tokenHash: hashResetToken(token),
    userId: input.userId,
    createdAt: input.now,
    expiresAt,
  })
  return { token, expiresAt }
}

/**
 * Always answers `sent`. A mail goes out only when the email belongs to a user, with a password or
 * without (one made by the CLI or OAuth sets a first password this way), and `mayMail` allows it: a
 * bound on mails per address, so the form cannot be used to flood an inbox. The caller should not
 * let the mail's delivery time show in the answer.
 */
export async function requestPasswordReset(
  deps: {
    credentials: Pick<CredentialStore, 'findByEmail'>
    resets: Pick<PasswordResetStore, 'insert'>
    random: RandomBytes
    mayMail: (email: string) => Promise<boolean>
    sendResetMail: (mail: ResetMail) => void
  },
  input: { email: string; now: Date },
): Promise<{ sent: true }> {
  const email = emailLookupKey(input.email)
  if (email === null) return { sent: true }
  const found = await deps.credentials.findByEmail(email)
  if (found === null || !(await deps.mayMail(email))) return { sent: true }
  const { token, expiresAt } = await issueUserToken(
    { store: deps.resets, random: deps.random },
    { userId: found.userId, now: input.now, lifetimeMs: RESET_LIFETIME_MS },
  )
  deps.sendResetMail({ to: found.email, token, expiresAt })
  return { sent: true }
}

export async function resetTokenUsable(
  deps: { resets: Pick<PasswordResetStore, 'usableBy'> },
  input: { token: string; now: Date },
): Promise<boolean> {
  if (!ONE_TIME_TOKEN.test(input.token)) return false
  return (await deps.resets.usableBy(hashResetToken(input.token), input.now)) !== null
}

export const RESET_LINK_INVALID = 'This reset link is invalid, used or expired. Ask for a new one.'

/**
 * Sets the new password and logs the user in on a fresh session, after ending all their others.
 * The password is checked before the token is spent, so a refused password leaves the link usable.
 */
export async function completePasswordReset(
  deps: {
    resets: Pick<PasswordResetStore, 'usableBy' | 'consume'>
    credentials: Pick<CredentialStore, 'findByUserId' | 'setPasswordHash'>
    passwords: Pick<PasswordHasher, 'hash'>
    sessions: Pick<SessionStore, 'insert' | 'deleteForUser'>
    random: RandomBytes
  },
  input: { token: string; password: string; now: Date } & ClientFacts,
): Promise<Result<StartedSession>> {
  if (!ONE_TIME_TOKEN.test(input.token)) return invalid('token', RESET_LINK_INVALID)
  const tokenHash = hashResetToken(input.token)
  const pending = await deps.resets.usableBy(tokenHash, input.now)
  const user = pending === null ? null : await deps.credentials.findByUserId(pending)
  if (user === null) return invalid('token', RESET_LINK_INVALID)
  const problem = passwordProblem(input.password, user.email)
  if (problem !== null) return invalid('password', problem)
  // Spent only now; a concurrent use of the same link may have won meanwhile.
  if ((await deps.resets.consume(tokenHash, input.now)) !== user.userId)
    return invalid('token', RESET_LINK_INVALID)
  await deps.credentials.setPasswordHash(user.userId, await deps.passwords.hash(input.password))
  await deps.sessions.deleteForUser(user.userId, null)
  const started = await startSession(deps, {
    userId: user.userId,
    accountId: user.accountId,
    email: user.email,
    now: input.now,
    userAgent: input.userAgent,
    ip: input.ip,
  })
  return { ok: true, value: started }
}
