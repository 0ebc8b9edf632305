import { emailLookupKey, normalizeEmail } from '../shared/email-address.ts'
import type { RandomBytes } from '../shared/random.ts'
import { invalid, type Result } from '../shared/result.ts'
import type { AccountStore } from './ports.ts'
import { type SessionStore, type StartedSession, startSession } from './sessions.ts'
import { createAccount, MIN_PASSWORD_LENGTH } from './use-cases.ts'

// Email and password sign-up and login (docs/dashboard.md: argon2id, errors that do not reveal whether
// the email exists). Hashing is a port: Bun.password in the app, something cheap in unit tests.

export interface Credentials {
  userId: string
  accountId: string
  email: string
  /** null: the user has no password (OAuth only) and cannot log in with one. */
  passwordHash: string | null
}

export interface CredentialStore {
  findByEmail(email: string): Promise<Credentials | null>
  findByUserId(userId: string): Promise<Credentials | null>
  setPasswordHash(userId: string, hash: string): Promise<void>
}

export interface PasswordHasher {
  hash(password: string): Promise<string>
  /**
   * Whether the password matches. With `hash` null (no such user, or no password) it answers false
   * after the same work as a real verification, so timing does not tell the two apart.
   */
  verify(password: string, hash: string | null): Promise<boolean>
}

export interface ClientFacts {
  userAgent: string | null
  ip: string | null
}

/** Argon2 is fed the whole password; a bound keeps a megabyte "password" from costing a megabyte of work. */
export const MAX_PASSWORD_LENGTH = 1000

/** The password policy: why a password is refused, or null. */
export function passwordProblem(password: string, email: string | null): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`
  if (password.length > MAX_PASSWORD_LENGTH)
    return `The password may have at most ${MAX_PASSWORD_LENGTH} characters.`
  if (password.trim() === '') return 'The password must not be only spaces.'
  if (email !== null && password.trim().toLowerCase() === email.toLowerCase())
    return 'The password must not be your email address.'
  return null
}

export async function signUp(
  deps: {
    accounts: AccountStore
    passwords: Pick<PasswordHasher, 'hash'>
    sessions: Pick<SessionStore, 'insert'>
    random: RandomBytes
  },
  input: { email: string; password: string; now: Date } & ClientFacts,
): Promise<Result<StartedSession>> {
  const email = normalizeEmail(input.email)
  if (email === null) return invalid('email', 'Give a valid email address.')
  const problem = passwordProblem(input.password, email)
  if (problem !== null) return invalid('password', problem)
  const created = await createAccount(
    { accounts: deps.accounts, random: deps.random, hashPassword: deps.passwords.hash },
    { email, password: input.password },
  )
  if (!created.ok) return created
  const started = await startSession(deps, {
    userId: created.value.userId,
    accountId: created.value.accountId,
    email,
    now: input.now,
    userAgent: input.userAgent,
    ip: input.ip,
  })
  return { ok: true, value: started }
}

export type LoginResult = { ok: true; value: StartedSession } | { ok: false; reason: 'invalid_credentials' }

/**
 * One answer for every failure (unknown email, no password, wrong password), and the same work for
 * each: an unknown email still pays for a password verification.
 */
export async function logIn(
  deps: {
    credentials: Pick<CredentialStore, 'findByEmail'>
    passwords: Pick<PasswordHasher, 'verify'>
    sessions: Pick<SessionStore, 'insert'>
    random: RandomBytes
  },
  input: { email: string; password: string; now: Date } & ClientFacts,
): Promise<LoginResult> {
  const email = emailLookupKey(input.email)
  const found = email === null ? null : await deps.credentials.findByEmail(email)
  // An over-long password cannot be anyone's (the policy refuses them), but it is still verified
  // against nothing, truncated, so the answer takes the usual time.
  const password = input.password.slice(0, MAX_PASSWORD_LENGTH + 1)
  const hash = password.length > MAX_PASSWORD_LENGTH ? null : (found?.passwordHash ?? null)
  const matches = await deps.passwords.verify(password, hash)
  // `hash === null` fails whatever the hasher answers: verifying against nothing is only for time.
  if (found === null || hash === null || !matches) return { ok: false, reason: 'invalid_credentials' }
  const started = await startSession(deps, {
    userId: found.userId,
    accountId: found.accountId,
    email: found.email,
    now: input.now,
    userAgent: input.userAgent,
    ip: input.ip,
  })
  return { ok: true, value: started }
}
