import { normalizeEmail } from '../shared/email-address.ts'
import type { RandomBytes } from '../shared/random.ts'
import type { ClientFacts, CredentialStore } from './password-login.ts'
import type { AccountStore, UserMembership } from './ports.ts'
import { type SessionStore, type StartedSession, startSession } from './sessions.ts'
import { createAccount } from './use-cases.ts'

// Sign-in through an OpenID Connect provider (docs/oauth.md). The provider's subject,
// not the email, identifies a returning user. An email only ever matters the first time, and only
// when the provider vouches for it (email_verified): an unverified address would let anyone who can
// type a victim's email into some IdP's profile take over the victim's account here.

/** What the adapter has established from a verified ID token (and UserInfo, OIDC Core §5.3.2). */
export interface ProviderClaims {
  /** The identity's provider key, e.g. `google` or `oidc:https://idp.example`. */
  provider: string
  /** `sub`: unique and never reassigned within the provider (OIDC Core §2). */
  subject: string
  email: string | null
  /** The provider says it checked that the person controls `email`. */
  emailVerified: boolean
  name: string | null
}

export interface OAuthIdentityStore {
  /** The user (with the account they log in to) an identity is linked to, or null. */
  findUser(provider: string, subject: string): Promise<UserMembership | null>
  /** Links an identity to a user; false when it is already linked (a concurrent first login won). */
  link(identity: {
    provider: string
    subject: string
    userId: string
    email: string | null
    now: Date
  }): Promise<boolean>
  /** Notes a login through the identity (its last email and time). */
  recordLogin(provider: string, subject: string, email: string | null, now: Date): Promise<void>
}

/** Removes a user's password (they log in through the provider, or set a new one by reset mail). */
export interface PasswordRemover {
  removePassword(userId: string): Promise<void>
}

export type OAuthRefusal = 'email_missing' | 'email_unverified'

export type OAuthDecision =
  | { kind: 'existing'; user: UserMembership }
  | { kind: 'link'; user: UserMembership; hadPassword: boolean }
  | { kind: 'create'; email: string }
  | { kind: 'refused'; reason: OAuthRefusal }

/**
 * The rules, without I/O: a linked identity logs in as its user whatever its email says now; else
 * a verified email links to the user who has it, or creates a user (and account) when none does;
 * an unverified or missing email is refused.
 */
export function decideOAuthLogin(
  claims: Pick<ProviderClaims, 'email' | 'emailVerified'>,
  found: { linked: UserMembership | null; byEmail: (UserMembership & { hasPassword: boolean }) | null },
): OAuthDecision {
  if (found.linked !== null) return { kind: 'existing', user: found.linked }
  const email = claims.email === null ? null : normalizeEmail(claims.email)
  if (email === null) return { kind: 'refused', reason: 'email_missing' }
  if (!claims.emailVerified) return { kind: 'refused', reason: 'email_unverified' }
  if (found.byEmail !== null) {
    const { hasPassword, ...user } = found.byEmail
    return { kind: 'link', user, hadPassword: hasPassword }
  }
  return { kind: 'create', email }
}

export type OAuthOutcome = 'existing' | 'linked' | 'created'

export type OAuthLoginResult =
  | { ok: true; value: StartedSession & { outcome: OAuthOutcome; passwordRemoved: boolean } }
  | { ok: false; reason: OAuthRefusal }

/**
 * Applies the decision and starts a session like a password login does.
 *
 * Linking to a user who has a password removes that password and ends the user's sessions. Sign-up
 * does not prove control of the address, so the password may have been set by someone else who
 * registered the victim's email first and waits for the victim to arrive through a provider
 * ("pre-account hijacking", Sudhodanan & Paverd, USENIX Security 2022). The provider's verified
 * email is the first proof of ownership; the owner can set a new password by reset mail, which
 * only they receive.
 */
export async function logInWithProvider(
  deps: {
    identities: OAuthIdentityStore
    passwordRemover: PasswordRemover
    credentials: Pick<CredentialStore, 'findByEmail'>
    accounts: AccountStore
    sessions: Pick<SessionStore, 'insert' | 'deleteForUser'>
    random: RandomBytes
  },
  input: { claims: ProviderClaims; now: Date } & ClientFacts,
): Promise<OAuthLoginResult> {
  const { claims, now } = input
  const email = claims.email === null ? null : normalizeEmail(claims.email)
  let outcome: OAuthOutcome | null = null
  let user: UserMembership | null = null
  let passwordRemoved = false
  // Twice at most: a concurrent first login may create the user or link the identity in between.
  for (let round = 0; round < 2 && user === null; round++) {
    const linked = await deps.identities.findUser(claims.provider, claims.subject)
    const credentials = linked === null && email !== null ? await deps.credentials.findByEmail(email) : null
    const decision = decideOAuthLogin(claims, {
      linked,
      byEmail:
        credentials === null
          ? null
          : {
              userId: credentials.userId,
              accountId: credentials.accountId,
              email: credentials.email,
              hasPassword: credentials.passwordHash !== null,
            },
    })
    if (decision.kind === 'refused') return { ok: false, reason: decision.reason }
    if (decision.kind === 'existing') {
      user = decision.user
      outcome = 'existing'
    } else if (decision.kind === 'link') {
      if (!(await link(deps, claims, decision.user.userId, now))) continue
      if (decision.hadPassword) {
        await deps.passwordRemover.removePassword(decision.user.userId)
        await deps.sessions.deleteForUser(decision.user.userId, null)
        passwordRemoved = true
      }
      user = decision.user
      outcome = 'linked'
    } else {
      const created = await createAccount(
        {
          accounts: deps.accounts,
          random: deps.random,
          hashPassword: () => Promise.reject(new Error('an OAuth user has no password')),
        },
        { email: decision.email },
      )
      // Not created: the email was taken meanwhile; the next round links to that user.
      if (!created.ok || !(await link(deps, claims, created.value.userId, now))) continue
      user = { userId: created.value.userId, accountId: created.value.accountId, email: decision.email }
      outcome = 'created'
    }
  }
  if (user === null || outcome === null) throw new Error('the OAuth login lost a race twice in a row')
  await deps.identities.recordLogin(claims.provider, claims.subject, email, now)
  const started = await startSession(deps, {
    userId: user.userId,
    accountId: user.accountId,
    email: user.email,
    now,
    userAgent: input.userAgent,
    ip: input.ip,
  })
  return { ok: true, value: { ...started, outcome, passwordRemoved } }
}

function link(
  deps: { identities: OAuthIdentityStore },
  claims: ProviderClaims,
  userId: string,
  now: Date,
): Promise<boolean> {
  const email = claims.email === null ? null : normalizeEmail(claims.email)
  return deps.identities.link({ provider: claims.provider, subject: claims.subject, userId, email, now })
}
