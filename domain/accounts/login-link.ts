import { emailLookupKey } from '../shared/email-address.ts'
import type { RandomBytes } from '../shared/random.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import {
  type ClientFacts,
  type CredentialStore,
  type PasswordHasher,
  passwordProblem,
} from './password-login.ts'
import { hashResetToken, issueUserToken, ONE_TIME_TOKEN } from './password-reset.ts'
import { type SessionStore, type StartedSession, startSession } from './sessions.ts'

// One-time sign-in links for the operator to hand over (docs/dashboard.md, "Signing in without a
// password"): `bun run cli account create` without a password prints one, `account login-link`
// makes a new one. The token is only in the link; its SHA-256 is stored. A link signs in once,
// within 24 hours, and a new link voids the user's older unused ones.

export const LOGIN_LINK_LIFETIME_MS = 24 * 3_600_000

export interface LoginLinkStore {
  /** Stores the link and voids the user's other unused links, in one transaction. */
  insert(link: { tokenHash: string; userId: string; createdAt: Date; expiresAt: Date }): Promise<void>
  /** The user of a link that can still be used at `now` (unused, unexpired), or null. */
  usableBy(tokenHash: string, now: Date): Promise<string | null>
  /** Marks the link used if it is unused and unexpired, atomically (of two uses, one wins): its user, or null. */
  consume(tokenHash: string, now: Date): Promise<string | null>
}

export const LOGIN_LINK_INVALID =
  'This sign-in link is invalid, used or expired. Ask the operator for a new one.'

/** The path of a link; the caller puts the configured public URL in front (PUBLIC_URL). */
export const loginLinkPath = (token: string) => `/login-link/${token}`

export async function createLoginLink(
  deps: {
    credentials: Pick<CredentialStore, 'findByEmail'>
    links: Pick<LoginLinkStore, 'insert'>
    random: RandomBytes
  },
  input: { email: string; now: Date },
): Promise<Result<{ token: string; email: string; hasPassword: boolean; expiresAt: Date }>> {
  const email = emailLookupKey(input.email)
  const user = email === null ? null : await deps.credentials.findByEmail(email)
  if (user === null) return fail({ code: 'not_found', resource: 'user' })
  const { token, expiresAt } = await issueUserToken(
    { store: deps.links, random: deps.random },
    { userId: user.userId, now: input.now, lifetimeMs: LOGIN_LINK_LIFETIME_MS },
  )
  return ok({ token, email: user.email, hasPassword: user.passwordHash !== null, expiresAt })
}

/** Whether the link would still sign in (the page before the button; nothing is spent). */
export async function loginLinkUsable(
  deps: { links: Pick<LoginLinkStore, 'usableBy'> },
  input: { token: string; now: Date },
): Promise<boolean> {
  if (!ONE_TIME_TOKEN.test(input.token)) return false
  return (await deps.links.usableBy(hashResetToken(input.token), input.now)) !== null
}

/** Spends the link and starts a session for its user; `hasPassword` false asks the page to offer one. */
export async function signInWithLink(
  deps: {
    links: Pick<LoginLinkStore, 'consume'>
    credentials: Pick<CredentialStore, 'findByUserId'>
    sessions: Pick<SessionStore, 'insert'>
    random: RandomBytes
  },
  input: { token: string; now: Date } & ClientFacts,
): Promise<Result<StartedSession & { hasPassword: boolean }>> {
  if (!ONE_TIME_TOKEN.test(input.token)) return invalid('token', LOGIN_LINK_INVALID)
  const userId = await deps.links.consume(hashResetToken(input.token), input.now)
  const user = userId === null ? null : await deps.credentials.findByUserId(userId)
  if (user === null) return invalid('token', LOGIN_LINK_INVALID)
  const started = await startSession(deps, {
    userId: user.userId,
    accountId: user.accountId,
    email: user.email,
    now: input.now,
    userAgent: input.userAgent,
    ip: input.ip,
  })
  return ok({ ...started, hasPassword: user.passwordHash !== null })
}

/**
 * A first password for a user who has none (signed in by a link): no current password to ask for.
 * A user who has one changes it by the password reset instead.
 */
export async function setFirstPassword(
  deps: {
    credentials: Pick<CredentialStore, 'findByUserId' | 'setPasswordHash'>
    passwords: Pick<PasswordHasher, 'hash'>
  },
  input: { userId: string; password: string },
): Promise<Result<null>> {
  const user = await deps.credentials.findByUserId(input.userId)
  if (user === null) return fail({ code: 'not_found', resource: 'user' })
  if (user.passwordHash !== null)
    return invalid('password', 'You have a password already; change it with a reset link.')
  const problem = passwordProblem(input.password, user.email)
  if (problem !== null) return invalid('password', problem)
  await deps.credentials.setPasswordHash(user.userId, await deps.passwords.hash(input.password))
  return ok(null)
}
