import { and, eq, gt, isNull } from 'drizzle-orm'
import type { LoginLinkStore } from '../../domain/accounts/login-link.ts'
import type { Db } from '../db/database.ts'
import { loginLinks } from '../db/schema/sessions.ts'

// One-time sign-in links (domain/accounts/login-link.ts): hashed tokens, single use, 24 hours.

export function pgLoginLinkStore(db: Db): LoginLinkStore {
  const usable = (tokenHash: string, now: Date) =>
    and(eq(loginLinks.tokenHash, tokenHash), isNull(loginLinks.usedAt), gt(loginLinks.expiresAt, now))
  return {
    async insert(link) {
      await db.transaction(async (tx) => {
        // Only the newest link works: one printed earlier (and perhaps pasted somewhere) dies now.
        await tx
          .update(loginLinks)
          .set({ usedAt: link.createdAt })
          .where(and(eq(loginLinks.userId, link.userId), isNull(loginLinks.usedAt)))
        await tx.insert(loginLinks).values(link)
      })
    },

    async usableBy(tokenHash, now) {
      const rows = await db
        .select({ userId: loginLinks.userId })
        .from(loginLinks)
        .where(usable(tokenHash, now))
      return rows[0]?.userId ?? null
    },

    async consume(tokenHash, now) {
      // The conditional update is the single-use guarantee: of two concurrent uses, one updates.
      const rows = await db
        .update(loginLinks)
        .set({ usedAt: now })
        .where(usable(tokenHash, now))
        .returning({ userId: loginLinks.userId })
      return rows[0]?.userId ?? null
    },
  }
}
