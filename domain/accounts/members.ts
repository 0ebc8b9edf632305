import type { ActiveSession } from './sessions.ts'

// Account members (issue #8): every member uses the account's data; only owners change who is in
// it and with which role. An account always keeps at least one owner, so it can never end up with
// nobody able to manage it.

export const ROLES = ['owner', 'member'] as const
export type Role = (typeof ROLES)[number]

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}

export interface Member {
  userId: string
  email: string
  role: Role
  joinedAt: Date
}

/** An account a user belongs to, as the account switcher offers it. */
export interface AccountChoice {
  accountId: string
  /** Accounts have no name: they go by the email of their first owner. */
  label: string
  role: Role
  joinedAt: Date
}

export type MemberChange =
  | { kind: 'remove'; actorId: string; userId: string }
  | { kind: 'role'; actorId: string; userId: string; role: Role }

export type MemberProblem = 'forbidden' | 'not_found' | 'last_owner'

export type MemberChangeResult =
  | { ok: true; endedSessions: number; userDeleted: boolean }
  | { ok: false; problem: MemberProblem }

export interface MemberStore {
  /** The account's members, oldest first. */
  list(accountId: string): Promise<Member[]>
  /**
   * Locks the account, checks `memberChangeProblem` against its members and applies the change in
   * the same transaction (two owners demoting each other at once cannot leave none). A removal
   * also ends the user's sessions in the account, revokes their API tokens there and deletes a
   * user left without any account.
   */
  apply(accountId: string, change: MemberChange, now: Date): Promise<MemberChangeResult>
  /** The accounts a user is a member of, oldest membership first. */
  accountsOf(userId: string): Promise<AccountChoice[]>
  /** Moves the session to the account when its user is a member of it; false otherwise. */
  switchSession(idHash: string, userId: string, accountId: string): Promise<boolean>
}

/** The name an account goes by: its first owner's email (or, failing that, its first member's). */
export function accountLabel(members: Pick<Member, 'email' | 'role' | 'joinedAt'>[]): string {
  const byAge = [...members].sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime())
  return (byAge.find((member) => member.role === 'owner') ?? byAge[0])?.email ?? 'unknown'
}

/** Why the change may not be made to these members, or null. */
export function memberChangeProblem(members: Member[], change: MemberChange): MemberProblem | null {
  const actor = members.find((member) => member.userId === change.actorId)
  if (actor?.role !== 'owner') return 'forbidden'
  const target = members.find((member) => member.userId === change.userId)
  if (target === undefined) return 'not_found'
  const losesOwner = target.role === 'owner' && (change.kind === 'remove' || change.role !== 'owner')
  if (losesOwner && members.filter((member) => member.role === 'owner').length === 1) return 'last_owner'
  return null
}

export function removeMember(
  deps: { members: Pick<MemberStore, 'apply'> },
  input: { accountId: string; actorId: string; userId: string; now: Date },
): Promise<MemberChangeResult> {
  return deps.members.apply(
    input.accountId,
    { kind: 'remove', actorId: input.actorId, userId: input.userId },
    input.now,
  )
}

export async function changeRole(
  deps: { members: Pick<MemberStore, 'apply'> },
  input: { accountId: string; actorId: string; userId: string; role: string; now: Date },
): Promise<MemberChangeResult | { ok: false; problem: 'invalid_role' }> {
  if (!isRole(input.role)) return { ok: false, problem: 'invalid_role' }
  return deps.members.apply(
    input.accountId,
    { kind: 'role', actorId: input.actorId, userId: input.userId, role: input.role },
    input.now,
  )
}

/** The account switcher: only an account the session's user is a member of. */
export function switchAccount(
  deps: { members: Pick<MemberStore, 'switchSession'> },
  input: { session: Pick<ActiveSession, 'idHash' | 'userId'>; accountId: string },
): Promise<boolean> {
  return deps.members.switchSession(input.session.idHash, input.session.userId, input.accountId)
}
