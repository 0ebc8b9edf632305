import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { CredentialStore } from '../../domain/accounts/password-login.ts'
import type { PasswordResetStore } from '../../domain/accounts/password-reset.ts'
import type { Db } from '../db/database.ts'
import { memberships, users } from '../db/schema/accounts.ts'
import { passwordResets } from '../db/schema/sessions.ts'

// Users' password hashes and password reset links.

const credentialColumns = {
  userId: users.id,
  accountId: memberships.accountId,
  email: users.email,
  passwordHash: users.passwordHash,
}

export function pgCredentialStore(db: Db): CredentialStore {
  // A user's first membership is the account they log in to (one account per user for now).
  const select = () =>
    db
      .select(credentialColumns)
      .from(users)
      .innerJoin(memberships, eq(memberships.userId, users.id))
      .orderBy(memberships.createdAt)
      .limit(1)
  return {
    async findByEmail(email) {
      const rows = await select().where(eq(sql`lower(${users.email})`, email.toLowerCase()))
      return rows[0] ?? null
    },

    async findByUserId(userId) {
      const rows = await select().where(eq(users.id, userId))
      return rows[0] ?? null
    },

    async setPasswordHash(userId, hash) {
      await db.update(users).set({ passwordHash: hash }).where(eq(users.id, userId))
    },
  }
}

export function pgPasswordResetStore(db: Db): PasswordResetStore {
  return {
    async insert(reset) {
      await db.insert(passwordResets).values(reset)
    },

    async usableBy(tokenHash, now) {
      const rows = await db
        .select({ userId: passwordResets.userId })
        .from(passwordResets)
        .where(
          and(
            eq(passwordResets.tokenHash, tokenHash),
            isNull(passwordResets.usedAt),
            gt(passwordResets.expiresAt, now),
          ),
        )
      return rows[0]?.userId ?? null
    },

    async consume(tokenHash, now) {
      return db.transaction(async (tx) => {
        // The conditional update is the single-use guarantee: of two concurrent uses, one updates.
        const rows = await tx
          .update(passwordResets)
          .set({ usedAt: now })
          .where(
            and(
              eq(passwordResets.tokenHash, tokenHash),
              isNull(passwordResets.usedAt),
              gt(passwordResets.expiresAt, now),
            ),
          )
          .returning({ userId: passwordResets.userId })
        const userId = rows[0]?.userId ?? null
        // Older links mailed to the same user die with this one.
        if (userId !== null)
          await tx
            .update(passwordResets)
            .set({ usedAt: now })
            .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)))
        return userId
      })
    },
  }
}
