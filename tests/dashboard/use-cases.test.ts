import { describe, expect, test } from 'bun:test'
import { type CredentialStore, logIn, passwordProblem } from '../../domain/accounts/password-login.ts'
import { completePasswordReset, type PasswordResetStore } from '../../domain/accounts/password-reset.ts'
import {
  hashSessionId,
  resumeSession,
  SESSION_IDLE_MS,
  type SessionRecord,
  type SessionStore,
  sameSecret,
} from '../../domain/accounts/sessions.ts'
import { safeNext } from '../../plugins/session.ts'

// The session, login and reset use cases against in-memory ports: the rules without a database.

let seed = 0
const random = (length: number) => Uint8Array.from({ length }, () => seed++ % 256)

function memorySessions() {
  const rows = new Map<string, SessionRecord>()
  const writes: string[] = []
  const store: SessionStore = {
    async insert(session) {
      rows.set(session.idHash, { ...session, email: 'a@example.com' })
    },
    async find(idHash) {
      return rows.get(idHash) ?? null
    },
    async touch(idHash, lastSeenAt, expiresAt) {
      writes.push(idHash)
      Object.assign(rows.get(idHash)!, { lastSeenAt, expiresAt })
    },
    async delete(idHash) {
      rows.delete(idHash)
    },
    async deleteForUser(userId, except) {
      let n = 0
      for (const [hash, row] of rows)
        if (row.userId === userId && hash !== except) {
          rows.delete(hash)
          n++
        }
      return n
    },
    async listForUser(userId) {
      return [...rows.values()].filter((row) => row.userId === userId)
    },
  }
  return { store, rows, writes }
}

describe('login', () => {
  const credentials: Pick<CredentialStore, 'findByEmail'> = {
    async findByEmail(email) {
      return email === 'a@example.com'
        ? { userId: 'u1', accountId: 'a1', email, passwordHash: 'hash:right password' }
        : null
    },
  }

  test('an unknown email still pays for a verification, and both failures look alike', async () => {
    const verified: (string | null)[] = []
    const passwords = {
      async verify(password: string, hash: string | null) {
        verified.push(hash)
        return hash === `hash:${password}`
      },
    }
    const sessions = memorySessions()
    const deps = { credentials, passwords, sessions: sessions.store, random }
    const now = new Date()
    const facts = { userAgent: null, ip: null }
    const unknown = await logIn(deps, { email: 'b@example.com', password: 'right password', now, ...facts })
    const wrong = await logIn(deps, { email: 'a@example.com', password: 'wrong password', now, ...facts })
    const junk = await logIn(deps, { email: 'not an email', password: 'x', now, ...facts })
    expect(unknown).toEqual(wrong)
    expect(junk).toEqual(wrong)
    expect(verified).toEqual([null, 'hash:right password', null])
    const right = await logIn(deps, { email: ' A@Example.com ', password: 'right password', now, ...facts })
    expect(right.ok).toBe(true)
    expect(sessions.rows.size).toBe(1)
  })

  test('a password past the length bound is verified against nothing', async () => {
    const verified: (string | null)[] = []
    const passwords = {
      async verify(password: string, hash: string | null) {
        verified.push(hash)
        expect(password.length).toBeLessThanOrEqual(1001)
        return true
      },
    }
    const deps = { credentials, passwords, sessions: memorySessions().store, random }
    const result = await logIn(deps, {
      email: 'a@example.com',
      password: 'x'.repeat(100_000),
      now: new Date(),
      userAgent: null,
      ip: null,
    })
    expect(result.ok).toBe(false)
    expect(verified).toEqual([null])
  })
})

test('the password policy', () => {
  expect(passwordProblem('short', null)).toContain('at least 10')
  expect(passwordProblem(' '.repeat(12), null)).toContain('only spaces')
  expect(passwordProblem('me@example.com', 'ME@example.com')).toContain('email')
  expect(passwordProblem('x'.repeat(1001), null)).toContain('at most 1000')
  expect(passwordProblem('a fine passphrase', 'me@example.com')).toBeNull()
})

test('sessions slide once an hour at most and die after 30 idle days', async () => {
  const sessions = memorySessions()
  const start = new Date('2026-01-01T00:00:00Z')
  const id = 'A'.repeat(43)
  await sessions.store.insert({
    idHash: hashSessionId(id),
    userId: 'u1',
    accountId: 'a1',
    csrfToken: 'c',
    createdAt: start,
    lastSeenAt: start,
    expiresAt: new Date(start.getTime() + SESSION_IDLE_MS),
    userAgent: null,
    ip: null,
  })
  const at = (ms: number) => new Date(start.getTime() + ms)
  expect((await resumeSession({ sessions: sessions.store }, { id, now: at(59 * 60_000) }))?.renewed).toBe(
    false,
  )
  expect(sessions.writes).toEqual([])
  const renewed = await resumeSession({ sessions: sessions.store }, { id, now: at(3_600_000) })
  expect(renewed?.renewed).toBe(true)
  expect(renewed?.session.expiresAt).toEqual(at(3_600_000 + SESSION_IDLE_MS))
  expect(renewed?.session.actor).toBe('user:u1')
  expect(
    await resumeSession({ sessions: sessions.store }, { id, now: at(3_600_000 + SESSION_IDLE_MS) }),
  ).toBeNull()
  expect(sessions.rows.size).toBe(0)
  expect(await resumeSession({ sessions: sessions.store }, { id: 'short', now: start })).toBeNull()
  expect(await resumeSession({ sessions: sessions.store }, { id: null, now: start })).toBeNull()
})

test('a reset with a password the policy refuses does not spend the link', async () => {
  let consumed = 0
  const resets: Pick<PasswordResetStore, 'usableBy' | 'consume'> = {
    async usableBy() {
      return 'u1'
    },
    async consume() {
      consumed++
      return 'u1'
    },
  }
  const credentials = {
    async findByUserId() {
      return { userId: 'u1', accountId: 'a1', email: 'me@example.com', passwordHash: null }
    },
    async setPasswordHash() {},
  }
  const deps = {
    resets,
    credentials,
    passwords: { hash: async (p: string) => `hash:${p}` },
    sessions: memorySessions().store,
    random,
  }
  const input = { token: 'B'.repeat(43), now: new Date(), userAgent: null, ip: null }
  const refused = await completePasswordReset(deps, { ...input, password: 'me@example.com' })
  expect(refused.ok).toBe(false)
  expect(consumed).toBe(0)
  expect((await completePasswordReset(deps, { ...input, password: 'a fine passphrase' })).ok).toBe(true)
  expect(consumed).toBe(1)
})

test('safeNext keeps local paths only', () => {
  expect(safeNext('/domains/example.com?x=1#y')).toBe('/domains/example.com?x=1#y')
  expect(safeNext('/settings/../domains')).toBe('/domains')
  for (const bad of [
    null,
    '',
    'domains',
    '//evil.example',
    '/\\evil.example',
    '/\nx',
    'https://evil.example',
    '\\\\evil',
    // Dot segments that resolve to `//host`, which a browser follows to another site.
    '/.//evil.example/path',
    '/..//evil.example',
    '/x/..//evil.example',
    '/%2e//evil.example',
  ])
    expect(safeNext(bad)).toBe('/domains')
})

test('sameSecret compares whole strings', () => {
  expect(sameSecret('abc', 'abc')).toBe(true)
  expect(sameSecret('abc', 'abd')).toBe(false)
  expect(sameSecret('abc', 'ab')).toBe(false)
})
