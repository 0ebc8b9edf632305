import { describe, expect, test } from 'bun:test'
import {
  decideOAuthLogin,
  logInWithProvider,
  type OAuthIdentityStore,
  type PasswordRemover,
  type ProviderClaims,
} from '../../../domain/accounts/oauth-login.ts'
import type { Credentials } from '../../../domain/accounts/password-login.ts'
import type { AccountStore, UserMembership } from '../../../domain/accounts/ports.ts'
import type { SessionRecord } from '../../../domain/accounts/sessions.ts'

// The OAuth login rules against in-memory ports: who a provider identity logs in as, when an email
// links or creates, and what linking does to a password set before the address was proven.

const alice: UserMembership = { userId: 'u-alice', accountId: 'a-alice', email: 'alice@example.com' }

describe('decideOAuthLogin', () => {
  const verified = { email: 'alice@example.com', emailVerified: true }

  test('a linked identity logs in as its user, whatever its email says now', () => {
    expect(decideOAuthLogin({ email: null, emailVerified: false }, { linked: alice, byEmail: null })).toEqual(
      {
        kind: 'existing',
        user: alice,
      },
    )
  })

  test('a verified email links to the user who has it, and says whether they had a password', () => {
    expect(
      decideOAuthLogin(
        { email: ' Alice@Example.COM ', emailVerified: true },
        {
          linked: null,
          byEmail: { ...alice, hasPassword: true },
        },
      ),
    ).toEqual({ kind: 'link', user: alice, hadPassword: true })
  })

  test('a verified email nobody has creates a user', () => {
    expect(decideOAuthLogin(verified, { linked: null, byEmail: null })).toEqual({
      kind: 'create',
      email: 'alice@example.com',
    })
  })

  test('an unverified email is refused, even when a user has it', () => {
    for (const byEmail of [null, { ...alice, hasPassword: true }])
      expect(
        decideOAuthLogin({ email: alice.email, emailVerified: false }, { linked: null, byEmail }),
      ).toEqual({
        kind: 'refused',
        reason: 'email_unverified',
      })
  })

  test('a missing or malformed email is refused', () => {
    for (const email of [null, '', 'not an address'])
      expect(decideOAuthLogin({ email, emailVerified: true }, { linked: null, byEmail: null })).toEqual({
        kind: 'refused',
        reason: 'email_missing',
      })
  })
})

/** Users, identities and sessions in memory, with the same contracts as the PostgreSQL stores. */
function world() {
  const users = new Map<string, Credentials>()
  const identities = new Map<string, { userId: string; email: string | null; lastLoginAt: Date | null }>()
  const sessions = new Map<string, SessionRecord>()
  let next = 0
  const key = (provider: string, subject: string) => `${provider}\u0000${subject}`
  const membership = (c: Credentials): UserMembership => ({
    userId: c.userId,
    accountId: c.accountId,
    email: c.email,
  })
  const store: OAuthIdentityStore & PasswordRemover = {
    async findUser(provider, subject) {
      const row = identities.get(key(provider, subject))
      return row === undefined ? null : membership(users.get(row.userId)!)
    },
    async link({ provider, subject, userId, email }) {
      if (identities.has(key(provider, subject))) return false
      identities.set(key(provider, subject), { userId, email, lastLoginAt: null })
      return true
    },
    async recordLogin(provider, subject, email, now) {
      Object.assign(identities.get(key(provider, subject))!, { email, lastLoginAt: now })
    },
    async removePassword(userId) {
      users.get(userId)!.passwordHash = null
    },
  }
  const accounts: AccountStore = {
    async createWithOwner({ email, passwordHash, ingestKey }) {
      if ([...users.values()].some((u) => u.email === email)) return 'email_taken'
      const userId = `u${++next}`
      const accountId = `a${next}`
      users.set(userId, { userId, accountId, email, passwordHash })
      return { userId, accountId, ingestKey }
    },
    async findMembershipByEmail(email) {
      const found = [...users.values()].find((u) => u.email === email)
      return found === undefined ? null : membership(found)
    },
    async ingestKeyOf() {
      return null
    },
  }
  const deps = {
    identities: store,
    passwordRemover: store,
    accounts,
    credentials: {
      async findByEmail(email: string) {
        return [...users.values()].find((u) => u.email === email) ?? null
      },
    },
    sessions: {
      async insert(session: Omit<SessionRecord, 'email'>) {
        sessions.set(session.idHash, { ...session, email: '' })
      },
      async deleteForUser(userId: string, except: string | null) {
        let n = 0
        for (const [hash, row] of sessions)
          if (row.userId === userId && hash !== except) {
            sessions.delete(hash)
            n++
          }
        return n
      },
    },
    random: (length: number) => Uint8Array.from({ length }, () => next++ % 256),
  }
  return { deps, users, identities, sessions }
}

const now = new Date('2026-03-01T10:00:00Z')
const facts = { userAgent: 'test', ip: '192.0.2.1' }
const claims = (overrides: Partial<ProviderClaims> = {}): ProviderClaims => ({
  provider: 'google',
  subject: 'sub-1',
  email: 'alice@example.com',
  emailVerified: true,
  name: 'Alice',
  ...overrides,
})

describe('logInWithProvider', () => {
  test('creates a user without a password and a new account, links the identity and starts a session', async () => {
    const w = world()
    const result = await logInWithProvider(w.deps, { claims: claims(), now, ...facts })
    if (!result.ok) throw new Error(result.reason)
    expect(result.value.outcome).toBe('created')
    expect(result.value.passwordRemoved).toBe(false)
    const user = [...w.users.values()][0]!
    expect(user).toMatchObject({ email: 'alice@example.com', passwordHash: null })
    expect(result.value.session).toMatchObject({ userId: user.userId, accountId: user.accountId })
    expect(w.identities.get('google\u0000sub-1')).toEqual({
      userId: user.userId,
      email: 'alice@example.com',
      lastLoginAt: now,
    })
    expect(w.sessions.size).toBe(1)

    // The same subject later: the same user, even with another (unverified) email.
    const again = await logInWithProvider(w.deps, {
      claims: claims({ email: 'renamed@example.com', emailVerified: false }),
      now,
      ...facts,
    })
    expect(again.ok && again.value.outcome).toBe('existing')
    expect(again.ok && again.value.session.userId).toBe(user.userId)
    expect(w.users.size).toBe(1)
    expect(w.identities.get('google\u0000sub-1')!.email).toBe('renamed@example.com')
  })

  test('linking to a password user removes the password and ends their sessions', async () => {
    const w = world()
    const created = await w.deps.accounts.createWithOwner({
      email: 'alice@example.com',
      passwordHash: 'argon2id-hash',
      ingestKey: 'r1',
    })
    if (created === 'email_taken') throw new Error('taken')
    await w.deps.sessions.insert({
      idHash: 'old-session',
      userId: created.userId,
      accountId: created.accountId,
      csrfToken: 'x',
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now,
      userAgent: null,
      ip: null,
    })
    const result = await logInWithProvider(w.deps, { claims: claims(), now, ...facts })
    if (!result.ok) throw new Error(result.reason)
    expect(result.value).toMatchObject({ outcome: 'linked', passwordRemoved: true })
    expect(result.value.session.userId).toBe(created.userId)
    expect(w.users.get(created.userId)!.passwordHash).toBeNull()
    expect([...w.sessions.keys()]).toEqual([result.value.session.idHash])
  })

  test('linking to a user without a password keeps their sessions', async () => {
    const w = world()
    await logInWithProvider(w.deps, { claims: claims({ provider: 'microsoft' }), now, ...facts })
    const result = await logInWithProvider(w.deps, { claims: claims(), now, ...facts })
    expect(result.ok && result.value).toMatchObject({ outcome: 'linked', passwordRemoved: false })
    expect(w.sessions.size).toBe(2)
    expect(w.users.size).toBe(1)
  })

  test('refusals create, link and start nothing', async () => {
    const w = world()
    await w.deps.accounts.createWithOwner({ email: 'alice@example.com', passwordHash: 'h', ingestKey: 'r1' })
    expect(
      await logInWithProvider(w.deps, { claims: claims({ emailVerified: false }), now, ...facts }),
    ).toEqual({
      ok: false,
      reason: 'email_unverified',
    })
    expect(await logInWithProvider(w.deps, { claims: claims({ email: null }), now, ...facts })).toEqual({
      ok: false,
      reason: 'email_missing',
    })
    expect(w.identities.size).toBe(0)
    expect(w.sessions.size).toBe(0)
    expect([...w.users.values()][0]!.passwordHash).toBe('h')
  })

  test('a concurrent first login that created the user first: this one links to it', async () => {
    const w = world()
    // The other request creates the user between this one's lookup and its creation.
    const findByEmail = w.deps.credentials.findByEmail
    let raced = false
    w.deps.credentials.findByEmail = async (email) => {
      const found = await findByEmail(email)
      if (!raced) {
        raced = true
        await w.deps.accounts.createWithOwner({ email, passwordHash: null, ingestKey: 'r-other' })
      }
      return found
    }
    const result = await logInWithProvider(w.deps, { claims: claims(), now, ...facts })
    expect(result.ok && result.value.outcome).toBe('linked')
    expect(w.users.size).toBe(1)
  })
})
