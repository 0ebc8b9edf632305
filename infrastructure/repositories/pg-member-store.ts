import { and, desc, eq, exists, gt, isNull, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import type { Invitation, InvitationStore } from '../../domain/accounts/invitations.ts'
import { type Member, type MemberStore, memberChangeProblem } from '../../domain/accounts/members.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import type { Db } from '../db/database.ts'
import { accounts, apiTokens, memberships, users } from '../db/schema/accounts.ts'
import { invitations } from '../db/schema/invitations.ts'
import { sessions } from '../db/schema/sessions.ts'

// Account members and invitations (issue #8). Every query is scoped by the account it is asked
// about: an id from another account is simply not found. Changes to who is in an account lock the
// account's row first, so the rules checked (an owner acts, one owner remains) still hold when the
// change is written.

/**
 * The email of the account's first owner (first member without one), as accountLabel() picks it,
 * for the account in `table`.account_id of the outer query (qualified: the subquery has its own).
 */
const labelOf = (table: typeof memberships | typeof invitations) => sql<string>`coalesce((
  select u.email from memberships o join users u on u.id = o.user_id
  where o.account_id = ${table}.account_id order by (o.role = 'owner') desc, o.created_at limit 1), 'unknown')`

function listMembers(db: Db, accountId: string): Promise<Member[]> {
  return db
    .select({ userId: users.id, email: users.email, role: memberships.role, joinedAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.accountId, accountId))
    .orderBy(memberships.createdAt, users.email)
}

export function pgMemberStore(db: Db): MemberStore {
  return {
    list: (accountId) => listMembers(db, accountId),

    async apply(accountId, change, now) {
      if (!isUuid(change.userId)) return { ok: false, problem: 'not_found' }
      return db.transaction(async (transaction) => {
        const tx = transaction as unknown as Db
        await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for('update')
        const problem = memberChangeProblem(await listMembers(tx, accountId), change)
        if (problem !== null) return { ok: false, problem }
        const member = and(eq(memberships.accountId, accountId), eq(memberships.userId, change.userId))
        if (change.kind === 'role') {
          await tx.update(memberships).set({ role: change.role }).where(member)
          return { ok: true, endedSessions: 0, userDeleted: false }
        }
        await tx.delete(memberships).where(member)
        // Whatever let the user into this account ends with the membership.
        const ended = await tx
          .delete(sessions)
          .where(and(eq(sessions.userId, change.userId), eq(sessions.accountId, accountId)))
          .returning({ idHash: sessions.idHash })
        await tx
          .update(apiTokens)
          .set({ revokedAt: now })
          .where(
            and(
              eq(apiTokens.accountId, accountId),
              eq(apiTokens.userId, change.userId),
              isNull(apiTokens.revokedAt),
            ),
          )
        // A user in no account could neither log in (login picks a membership) nor sign up again
        // (the email is taken); deleting them lets the address start afresh or accept a new
        // invitation after signing up.
        const rest = await tx
          .select({ accountId: memberships.accountId })
          .from(memberships)
          .where(eq(memberships.userId, change.userId))
          .limit(1)
        if (rest.length === 0) await tx.delete(users).where(eq(users.id, change.userId))
        return { ok: true, endedSessions: ended.length, userDeleted: rest.length === 0 }
      })
    },

    accountsOf(userId) {
      return db
        .select({
          accountId: memberships.accountId,
          label: labelOf(memberships),
          role: memberships.role,
          joinedAt: memberships.createdAt,
        })
        .from(memberships)
        .where(eq(memberships.userId, userId))
        .orderBy(memberships.createdAt)
    },

    async switchSession(idHash, userId, accountId) {
      if (!isUuid(accountId)) return false
      const member = db
        .select({ one: sql`1` })
        .from(memberships)
        .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)))
      const rows = await db
        .update(sessions)
        .set({ accountId })
        .where(and(eq(sessions.idHash, idHash), eq(sessions.userId, userId), exists(member)))
        .returning({ idHash: sessions.idHash })
      return rows.length === 1
    },
  }
}

const inviter = alias(users, 'inviter')

const invitationColumns = {
  id: invitations.id,
  accountId: invitations.accountId,
  email: invitations.email,
  role: invitations.role,
  invitedBy: inviter.email,
  createdAt: invitations.createdAt,
  expiresAt: invitations.expiresAt,
}

const isOpen = and(isNull(invitations.acceptedAt), isNull(invitations.revokedAt))

export function pgInvitationStore(db: Db): InvitationStore {
  return {
    async create(input) {
      return db.transaction(async (transaction) => {
        const tx = transaction as unknown as Db
        // One live link per address and account: inviting again replaces the earlier link.
        await tx
          .select({ id: accounts.id })
          .from(accounts)
          .where(eq(accounts.id, input.accountId))
          .for('update')
        await tx
          .update(invitations)
          .set({ revokedAt: input.createdAt })
          .where(and(eq(invitations.accountId, input.accountId), eq(invitations.email, input.email), isOpen))
        const [row] = await tx.insert(invitations).values(input).returning()
        const [by] = await tx.select({ email: users.email }).from(users).where(eq(users.id, input.invitedBy))
        return {
          id: row!.id,
          accountId: row!.accountId,
          email: row!.email,
          role: row!.role,
          invitedBy: by?.email ?? null,
          createdAt: row!.createdAt,
          expiresAt: row!.expiresAt,
        } satisfies Invitation
      })
    },

    open(accountId) {
      return db
        .select(invitationColumns)
        .from(invitations)
        .leftJoin(inviter, eq(inviter.id, invitations.invitedBy))
        .where(and(eq(invitations.accountId, accountId), isOpen))
        .orderBy(desc(invitations.createdAt))
    },

    async revoke(accountId, id, now) {
      if (!isUuid(id)) return false
      const rows = await db
        .update(invitations)
        .set({ revokedAt: now })
        .where(and(eq(invitations.id, id), eq(invitations.accountId, accountId), isOpen))
        .returning({ id: invitations.id })
      return rows.length === 1
    },

    async findByTokenHash(tokenHash) {
      const rows = await db
        .select({
          ...invitationColumns,
          acceptedAt: invitations.acceptedAt,
          revokedAt: invitations.revokedAt,
          accountLabel: labelOf(invitations),
        })
        .from(invitations)
        .leftJoin(inviter, eq(inviter.id, invitations.invitedBy))
        .where(eq(invitations.tokenHash, tokenHash))
      return rows[0] ?? null
    },

    async accept(tokenHash, userId, now) {
      return db.transaction(async (transaction) => {
        const tx = transaction as unknown as Db
        // The conditional update is the single-use guarantee: of two concurrent uses, one updates.
        const [spent] = await tx
          .update(invitations)
          .set({ acceptedAt: now, acceptedBy: userId })
          .where(and(eq(invitations.tokenHash, tokenHash), isOpen, gt(invitations.expiresAt, now)))
          .returning({ accountId: invitations.accountId, role: invitations.role })
        if (spent === undefined) return null
        // joined_at is the database's clock, as for the memberships sign-up creates: login picks
        // the oldest membership, so both must count time the same way.
        await tx
          .insert(memberships)
          .values({ accountId: spent.accountId, userId, role: spent.role })
          .onConflictDoNothing()
        return spent.accountId
      })
    },
  }
}
