import { sha256 } from '@oslojs/crypto/sha2'
import { encodeBase64urlNoPadding, encodeHexLowerCase } from '@oslojs/encoding'
import type { RandomBytes } from '../shared/random.ts'
import { userActor } from './actor.ts'

// Dashboard sessions (docs/dashboard.md): an opaque random id in the cookie, only its hash stored;
// sliding expiry, ended after 30 days without use; a CSRF token per session.

/** docs/dashboard.md: logged out after 30 days of inactivity. */
export const SESSION_IDLE_MS = 30 * 86_400_000
/**
 * How stale `last_seen_at` may get before a request moves it (and the expiry) forward. Touching on
 * every request would turn every page view into a write; an hour costs at most an hour of the
 * 30 days and keeps reads read-only.
 */
export const SESSION_TOUCH_MS = 3_600_000

export interface SessionRecord {
  idHash: string
  userId: string
  accountId: string
  /** The user's email, joined by the store for display. */
  email: string
  csrfToken: string
  createdAt: Date
  lastSeenAt: Date
  expiresAt: Date
  userAgent: string | null
  ip: string | null
}

export interface SessionStore {
  insert(session: Omit<SessionRecord, 'email'>): Promise<void>
  find(idHash: string): Promise<SessionRecord | null>
  touch(idHash: string, lastSeenAt: Date, expiresAt: Date): Promise<void>
  delete(idHash: string): Promise<void>
  /** Deletes every session of the user but `exceptIdHash` (null: all); returns how many. */
  deleteForUser(userId: string, exceptIdHash: string | null): Promise<number>
  /** The user's sessions that have not expired at `now`, most recently used first. */
  listForUser(userId: string, now: Date): Promise<SessionRecord[]>
}

/** What a request learns about its session: enough to authorise, render and check CSRF. */
export interface ActiveSession {
  idHash: string
  userId: string
  accountId: string
  email: string
  csrfToken: string
  expiresAt: Date
  /** What the user's changes are recorded as (`user:<id>`). */
  actor: string
}

export interface StartedSession {
  /** The cookie value: shown to the browser once, never stored. */
  id: string
  session: ActiveSession
}

// 32 random bytes, base64url: 43 characters. The shape check keeps junk cookies from costing a query.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

export function hashSessionId(id: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(id)))
}

const clip = (value: string | null, max: number) => (value === null ? null : value.slice(0, max))

export async function startSession(
  deps: { sessions: Pick<SessionStore, 'insert'>; random: RandomBytes },
  input: {
    userId: string
    accountId: string
    email: string
    now: Date
    userAgent: string | null
    ip: string | null
  },
): Promise<StartedSession> {
  const id = encodeBase64urlNoPadding(deps.random(32))
  const csrfToken = encodeBase64urlNoPadding(deps.random(32))
  const idHash = hashSessionId(id)
  const expiresAt = new Date(input.now.getTime() + SESSION_IDLE_MS)
  await deps.sessions.insert({
    idHash,
    userId: input.userId,
    accountId: input.accountId,
    csrfToken,
    createdAt: input.now,
    lastSeenAt: input.now,
    expiresAt,
    userAgent: clip(input.userAgent, 300),
    ip: clip(input.ip, 100),
  })
  return {
    id,
    session: {
      idHash,
      userId: input.userId,
      accountId: input.accountId,
      email: input.email,
      csrfToken,
      expiresAt,
      actor: userActor(input.userId),
    },
  }
}

/**
 * The session a cookie names, if it is live; `renewed` says its expiry moved (the cookie's lifetime
 * should follow). An expired session is deleted on sight.
 */
export async function resumeSession(
  deps: { sessions: Pick<SessionStore, 'find' | 'touch' | 'delete'> },
  input: { id: string | null; now: Date },
): Promise<{ session: ActiveSession; renewed: boolean } | null> {
  if (input.id === null || !SESSION_ID.test(input.id)) return null
  const idHash = hashSessionId(input.id)
  const found = await deps.sessions.find(idHash)
  if (found === null) return null
  const now = input.now.getTime()
  if (found.expiresAt.getTime() <= now) {
    await deps.sessions.delete(idHash)
    return null
  }
  let expiresAt = found.expiresAt
  const renewed = now - found.lastSeenAt.getTime() >= SESSION_TOUCH_MS
  if (renewed) {
    expiresAt = new Date(now + SESSION_IDLE_MS)
    await deps.sessions.touch(idHash, input.now, expiresAt)
  }
  return {
    session: {
      idHash,
      userId: found.userId,
      accountId: found.accountId,
      email: found.email,
      csrfToken: found.csrfToken,
      expiresAt,
      actor: userActor(found.userId),
    },
    renewed,
  }
}

export async function endSession(
  deps: { sessions: Pick<SessionStore, 'delete'> },
  input: { session: Pick<ActiveSession, 'idHash'> },
): Promise<void> {
  await deps.sessions.delete(input.session.idHash)
}

/** "Log out other sessions": every session of the user except the one asking. */
export function endOtherSessions(
  deps: { sessions: Pick<SessionStore, 'deleteForUser'> },
  input: { session: Pick<ActiveSession, 'idHash' | 'userId'> },
): Promise<number> {
  return deps.sessions.deleteForUser(input.session.userId, input.session.idHash)
}

/** Compares secrets without an early exit on the first differing character. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
