import { and, eq } from 'drizzle-orm'
import type { OAuthIdentityStore, PasswordRemover } from '../../domain/accounts/oauth-login.ts'
import type { Db } from '../db/database.ts'
import { memberships, users } from '../db/schema/accounts.ts'
import { oauthIdentities } from '../db/schema/sessions.ts'

// OAuth / OpenID Connect identities linked to users (issue #8; docs/oauth.md), keyed by
// (provider, subject).

export function pgOAuthIdentityStore(db: Db): OAuthIdentityStore & PasswordRemover {
  return {
    async findUser(provider, subject) {
      // The user's first membership is the account they log in to, as for a password login.
      const rows = await db
        .select({ userId: users.id, accountId: memberships.accountId, email: users.email })
        .from(oauthIdentities)
        .innerJoin(users, eq(users.id, oauthIdentities.userId))
        .innerJoin(memberships, eq(memberships.userId, users.id))
        .where(and(eq(oauthIdentities.provider, provider), eq(oauthIdentities.subject, subject)))
        .orderBy(memberships.createdAt)
        .limit(1)
      return rows[0] ?? null
    },

    async link({ provider, subject, userId, email, now }) {
      const rows = await db
        .insert(oauthIdentities)
        .values({ provider, subject, userId, email, createdAt: now })
        .onConflictDoNothing()
        .returning({ subject: oauthIdentities.subject })
      return rows.length === 1
    },

    async recordLogin(provider, subject, email, now) {
      await db
        .update(oauthIdentities)
        .set({ email, lastLoginAt: now })
        .where(and(eq(oauthIdentities.provider, provider), eq(oauthIdentities.subject, subject)))
    },

    async removePassword(userId) {
      await db.update(users).set({ passwordHash: null }).where(eq(users.id, userId))
    },
  }
}
