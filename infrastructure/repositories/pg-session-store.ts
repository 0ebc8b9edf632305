import { and, desc, eq, gt, lt, ne } from 'drizzle-orm'
import type { SessionStore } from '../../domain/accounts/sessions.ts'
import type { Db } from '../db/database.ts'
import { users } from '../db/schema/accounts.ts'
import { loginLinks, passwordResets, sessions } from '../db/schema/sessions.ts'

// Sessions by the hash of their id (docs/dashboard.md). Every read joins the user for the email the
// pages show, so a request costs one query while its session is fresh.

const columns = {
  idHash: sessions.idHash,
  userId: sessions.userId,
  accountId: sessions.accountId,
  email: users.email,
  csrfToken: sessions.csrfToken,
  createdAt: sessions.createdAt,
  lastSeenAt: sessions.lastSeenAt,
  expiresAt: sessions.expiresAt,
  userAgent: sessions.userAgent,
  ip: sessions.ip,
}

export function pgSessionStore(db: Db): SessionStore {
  return {
    async insert(session) {
      await db.insert(sessions).values(session)
    },

    async find(idHash) {
      const rows = await db
        .select(columns)
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(eq(sessions.idHash, idHash))
      return rows[0] ?? null
    },

    async touch(idHash, lastSeenAt, expiresAt) {
      await db.update(sessions).set({ lastSeenAt, expiresAt }).where(eq(sessions.idHash, idHash))
    },

    async delete(idHash) {
      await db.delete(sessions).where(eq(sessions.idHash, idHash))
    },

    async deleteForUser(userId, exceptIdHash) {
      const rows = await db
        .delete(sessions)
        .where(
          exceptIdHash === null
            ? eq(sessions.userId, userId)
            : and(eq(sessions.userId, userId), ne(sessions.idHash, exceptIdHash)),
        )
        .returning({ idHash: sessions.idHash })
      return rows.length
    },

    async listForUser(userId, now) {
      return db
        .select(columns)
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)))
        .orderBy(desc(sessions.lastSeenAt))
    },
  }
}

/**
 * Deletes sessions past their expiry, and reset and sign-in links expired before `now`; for a
 * maintenance job.
 * Expired rows are already refused on use, so this only keeps the tables small.
 */
export async function deleteExpiredSessions(
  db: Db,
  now: Date,
): Promise<{ sessions: number; resets: number; links: number }> {
  const gone = await db
    .delete(sessions)
    .where(lt(sessions.expiresAt, now))
    .returning({ idHash: sessions.idHash })
  const resets = await db
    .delete(passwordResets)
    .where(lt(passwordResets.expiresAt, now))
    .returning({ tokenHash: passwordResets.tokenHash })
  const links = await db
    .delete(loginLinks)
    .where(lt(loginLinks.expiresAt, now))
    .returning({ tokenHash: loginLinks.tokenHash })
  return { sessions: gone.length, resets: resets.length, links: links.length }
}
