import { eq, sql } from 'drizzle-orm'
import type { AccountStore } from '../../domain/accounts/ports.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { accounts, memberships, users } from '../db/schema/accounts.ts'

export function pgAccountStore(db: Db): AccountStore {
  return {
    async createWithOwner({ email, passwordHash, ingestKey }) {
      try {
        return await db.transaction(async (tx) => {
          const [account] = await tx.insert(accounts).values({ ingestKey }).returning()
          const [user] = await tx.insert(users).values({ email, passwordHash }).returning()
          await tx.insert(memberships).values({ accountId: account!.id, userId: user!.id, role: 'owner' })
          return { accountId: account!.id, userId: user!.id, ingestKey: account!.ingestKey }
        })
      } catch (error) {
        if (isUniqueViolation(error, 'users_email_key')) return 'email_taken'
        throw error
      }
    },

    async findMembershipByEmail(email) {
      const rows = await db
        .select({ userId: users.id, accountId: memberships.accountId, email: users.email })
        .from(users)
        .innerJoin(memberships, eq(memberships.userId, users.id))
        .where(eq(sql`lower(${users.email})`, email.toLowerCase()))
        .orderBy(memberships.createdAt)
        .limit(1)
      return rows[0] ?? null
    },

    async ingestKeyOf(accountId) {
      const rows = await db
        .select({ ingestKey: accounts.ingestKey })
        .from(accounts)
        .where(eq(accounts.id, accountId))
      return rows[0]?.ingestKey ?? null
    },
  }
}
