import { describe, expect, test } from 'bun:test'
import {
  acceptInvitation,
  hashInvitationToken,
  INVITATION_LIFETIME_MS,
  type Invitation,
  type InvitationMail,
  type InvitationRecord,
  type InvitationStore,
  invitationProblem,
  inviteMember,
  lookUpInvitation,
  revokeInvitation,
} from '../../../domain/accounts/invitations.ts'
import {
  accountLabel,
  changeRole,
  type Member,
  type MemberChange,
  memberChangeProblem,
  removeMember,
} from '../../../domain/accounts/members.ts'

// The membership rules and the invitation use cases against in-memory ports with the contracts
// of the PostgreSQL stores (tests/dashboard/members.test.ts runs them against the real ones).

const T0 = new Date('2025-03-01T10:00:00Z')
const DAY = 86_400_000
const at = (days: number) => new Date(T0.getTime() + days * DAY)

const owner: Member = { userId: 'u-ann', email: 'ann@example.com', role: 'owner', joinedAt: at(0) }
const member: Member = { userId: 'u-bob', email: 'bob@example.com', role: 'member', joinedAt: at(1) }
const coOwner: Member = { userId: 'u-cat', email: 'cat@example.com', role: 'owner', joinedAt: at(2) }

describe('memberChangeProblem', () => {
  const remove = (actorId: string, userId: string): MemberChange => ({ kind: 'remove', actorId, userId })

  test('only an owner changes members', () => {
    expect(memberChangeProblem([owner, member], remove('u-bob', 'u-ann'))).toBe('forbidden')
    expect(memberChangeProblem([owner, member], remove('u-stranger', 'u-bob'))).toBe('forbidden')
    expect(memberChangeProblem([owner, member], remove('u-ann', 'u-bob'))).toBeNull()
  })

  test('someone outside the account is not found', () => {
    expect(memberChangeProblem([owner, member], remove('u-ann', 'u-zed'))).toBe('not_found')
  })

  test('the last owner is never removed or demoted, not even by themselves', () => {
    expect(memberChangeProblem([owner, member], remove('u-ann', 'u-ann'))).toBe('last_owner')
    expect(
      memberChangeProblem([owner, member], {
        kind: 'role',
        actorId: 'u-ann',
        userId: 'u-ann',
        role: 'member',
      }),
    ).toBe('last_owner')
    // Keeping the role is no loss of an owner.
    expect(
      memberChangeProblem([owner, member], {
        kind: 'role',
        actorId: 'u-ann',
        userId: 'u-ann',
        role: 'owner',
      }),
    ).toBeNull()
  })

  test('with a second owner, either may go', () => {
    expect(memberChangeProblem([owner, coOwner], remove('u-ann', 'u-ann'))).toBeNull()
    expect(memberChangeProblem([owner, coOwner], remove('u-ann', 'u-cat'))).toBeNull()
    expect(
      memberChangeProblem([owner, coOwner], {
        kind: 'role',
        actorId: 'u-cat',
        userId: 'u-ann',
        role: 'member',
      }),
    ).toBeNull()
  })
})

test('an account goes by its first owner, else its first member', () => {
  expect(accountLabel([member, coOwner, owner])).toBe('ann@example.com')
  expect(accountLabel([member])).toBe('bob@example.com')
  expect(accountLabel([])).toBe('unknown')
})

/** One account's members and invitations in memory. */
function world(initial: Member[] = [owner, member]) {
  const members = new Map<string, Member[]>([['acc-1', [...initial]]])
  const rows: (InvitationRecord & { tokenHash: string })[] = []
  const sessions = new Map<string, { userId: string; accountId: string }>()
  const mails: InvitationMail[] = []
  let next = 0
  const invitations: InvitationStore = {
    async create(input) {
      for (const row of rows)
        if (
          row.accountId === input.accountId &&
          row.email === input.email &&
          !row.acceptedAt &&
          !row.revokedAt
        )
          row.revokedAt = input.createdAt
      const by = members.get(input.accountId)?.find((m) => m.userId === input.invitedBy)
      const row = {
        ...input,
        id: `inv-${++next}`,
        invitedBy: by?.email ?? null,
        acceptedAt: null,
        revokedAt: null,
        accountLabel: accountLabel(members.get(input.accountId) ?? []),
      }
      rows.push(row)
      const { tokenHash: _, acceptedAt: __, revokedAt: ___, accountLabel: ____, ...invitation } = row
      return invitation satisfies Invitation
    },
    async open(accountId) {
      return rows.filter((r) => r.accountId === accountId && !r.acceptedAt && !r.revokedAt)
    },
    async revoke(accountId, id, now) {
      const row = rows.find((r) => r.id === id && r.accountId === accountId && !r.acceptedAt && !r.revokedAt)
      if (row) row.revokedAt = now
      return row !== undefined
    },
    async findByTokenHash(tokenHash) {
      return rows.find((r) => r.tokenHash === tokenHash) ?? null
    },
    async accept(tokenHash, userId, now) {
      const row = rows.find((r) => r.tokenHash === tokenHash)
      if (!row || row.acceptedAt || row.revokedAt || row.expiresAt <= now) return null
      row.acceptedAt = now
      const list = members.get(row.accountId)!
      if (!list.some((m) => m.userId === userId))
        list.push({ userId, email: `${userId}@example.com`, role: row.role, joinedAt: now })
      return row.accountId
    },
  }
  const memberStore = {
    async list(accountId: string) {
      return members.get(accountId) ?? []
    },
    async apply(accountId: string, change: MemberChange) {
      const list = members.get(accountId) ?? []
      const problem = memberChangeProblem(list, change)
      if (problem !== null) return { ok: false as const, problem }
      if (change.kind === 'remove')
        members.set(
          accountId,
          list.filter((m) => m.userId !== change.userId),
        )
      else list.find((m) => m.userId === change.userId)!.role = change.role
      return { ok: true as const, endedSessions: 0, userDeleted: false }
    },
    async switchSession(idHash: string, userId: string, accountId: string) {
      const session = sessions.get(idHash)
      if (!session || session.userId !== userId) return false
      if (!members.get(accountId)?.some((m) => m.userId === userId)) return false
      session.accountId = accountId
      return true
    },
  }
  const deps = {
    members: memberStore,
    invitations,
    random: (length: number) => Uint8Array.from({ length }, () => next++ % 256),
    admit: async () => ({ allowed: true, retryAfter: 0 }),
    sendInvitationMail: async (mail: InvitationMail) => {
      mails.push(mail)
      return true
    },
  }
  return { deps, rows, mails, sessions, members }
}

const invite = (w: ReturnType<typeof world>, input: Partial<Parameters<typeof inviteMember>[1]> = {}) =>
  inviteMember(w.deps, {
    accountId: 'acc-1',
    actorId: 'u-ann',
    email: ' Dan@Example.COM ',
    role: 'member',
    now: T0,
    ...input,
  })

describe('inviteMember', () => {
  test('an owner invites: a hashed single token, 7 days, a mail carrying the token', async () => {
    const w = world()
    const result = await invite(w)
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(result.value).toMatchObject({
      email: 'dan@example.com',
      role: 'member',
      invitedBy: 'ann@example.com',
    })
    expect(result.value.expiresAt.getTime() - T0.getTime()).toBe(INVITATION_LIFETIME_MS)
    expect(w.mails).toHaveLength(1)
    const mail = w.mails[0]!
    expect(mail).toMatchObject({
      to: 'dan@example.com',
      accountLabel: 'ann@example.com',
      invitedBy: 'ann@example.com',
    })
    expect(mail.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // Only the hash is stored.
    expect(w.rows[0]!.tokenHash).toBe(hashInvitationToken(mail.token))
    expect(w.rows[0]!.tokenHash).not.toContain(mail.token)
  })

  test('a member (not an owner) may not invite', async () => {
    const w = world()
    const result = await invite(w, { actorId: 'u-bob' })
    expect(result).toMatchObject({ ok: false, failure: { code: 'forbidden' } })
    expect(w.mails).toHaveLength(0)
  })

  test('a bad email or role, or an existing member, is refused at the field', async () => {
    const w = world()
    // 'nope', and addresses that only the old `x@y.z` pattern took (found by a hostile-input sweep).
    for (const email of ['nope', '<dan@example.com>', 'dan..x@example.com', 'dan@-example.com'])
      expect(await invite(w, { email }), email).toMatchObject({
        failure: { errors: { email: ['Give a valid email address.'] } },
      })
    expect(await invite(w, { role: 'admin' })).toMatchObject({
      failure: { errors: { role: expect.any(Array) } },
    })
    const existing = await invite(w, { email: 'BOB@example.com' })
    expect(existing).toMatchObject({
      failure: { errors: { email: ['bob@example.com is already a member of this account.'] } },
    })
    expect(w.rows).toHaveLength(0)
  })

  test('refused by the mail limit: nothing stored, nothing sent', async () => {
    const w = world()
    w.deps.admit = async () => ({ allowed: false, retryAfter: 42 })
    expect(await invite(w)).toEqual({ ok: false, failure: { code: 'rate_limited', retryAfter: 42 } })
    expect(w.rows).toHaveLength(0)
    expect(w.mails).toHaveLength(0)
  })

  test('a mail that cannot be sent withdraws the invitation', async () => {
    const w = world()
    w.deps.sendInvitationMail = async () => false
    expect(await invite(w)).toMatchObject({ ok: false, failure: { errors: { email: expect.any(Array) } } })
    expect(w.rows).toHaveLength(1)
    expect(w.rows[0]!.revokedAt).toEqual(T0)
  })

  test('inviting again voids the earlier link', async () => {
    const w = world()
    await invite(w)
    await invite(w, { now: at(1) })
    const first = w.mails[0]!.token
    expect((await lookUpInvitation(w.deps, { token: first, now: at(1), email: null })).problem).toBe(
      'revoked',
    )
    expect(
      (await lookUpInvitation(w.deps, { token: w.mails[1]!.token, now: at(1), email: null })).problem,
    ).toBeNull()
  })
})

describe('accepting', () => {
  const session = (userId: string, email: string) => ({ idHash: `s-${userId}`, userId, email })

  test('the invited user joins with the role and their session moves to the account, once', async () => {
    const w = world()
    await invite(w, { role: 'owner' })
    w.sessions.set('s-u-dan', { userId: 'u-dan', accountId: 'acc-dan' })
    const token = w.mails[0]!.token
    const joined = await acceptInvitation(w.deps, {
      token,
      session: session('u-dan', 'DAN@example.com'),
      now: at(1),
    })
    expect(joined).toEqual({ ok: true, accountId: 'acc-1', label: 'ann@example.com' })
    expect(w.sessions.get('s-u-dan')!.accountId).toBe('acc-1')
    expect(w.members.get('acc-1')!.find((m) => m.userId === 'u-dan')!.role).toBe('owner')
    const again = await acceptInvitation(w.deps, {
      token,
      session: session('u-dan', 'dan@example.com'),
      now: at(1),
    })
    expect(again).toMatchObject({ ok: false, problem: 'used' })
  })

  test('another user is refused and the link stays usable', async () => {
    const w = world()
    await invite(w)
    const token = w.mails[0]!.token
    const wrong = await acceptInvitation(w.deps, {
      token,
      session: session('u-eve', 'eve@example.com'),
      now: at(1),
    })
    expect(wrong).toMatchObject({
      ok: false,
      problem: 'wrong_email',
      invitation: { email: 'dan@example.com' },
    })
    expect(w.members.get('acc-1')!.some((m) => m.userId === 'u-eve')).toBe(false)
    expect(
      (await lookUpInvitation(w.deps, { token, now: at(1), email: 'dan@example.com' })).problem,
    ).toBeNull()
  })

  test('expired, revoked and malformed links are refused', async () => {
    const w = world()
    await invite(w)
    const token = w.mails[0]!.token
    const dan = session('u-dan', 'dan@example.com')
    expect(await acceptInvitation(w.deps, { token, session: dan, now: at(7) })).toMatchObject({
      problem: 'expired',
    })
    await revokeInvitation(w.deps, { accountId: 'acc-1', actorId: 'u-ann', id: w.rows[0]!.id, now: at(1) })
    expect(await acceptInvitation(w.deps, { token, session: dan, now: at(1) })).toMatchObject({
      problem: 'revoked',
    })
    for (const bad of ['', 'short', `${token}x`, token.replace(/./, '!')])
      expect(await acceptInvitation(w.deps, { token: bad, session: dan, now: at(1) })).toMatchObject({
        problem: 'invalid',
      })
  })

  test('the order of problems: used and revoked before expired, expired before the wrong email', () => {
    const base: InvitationRecord = {
      id: 'i',
      accountId: 'a',
      email: 'dan@example.com',
      role: 'member',
      invitedBy: null,
      createdAt: T0,
      expiresAt: at(7),
      acceptedAt: null,
      revokedAt: null,
      accountLabel: 'ann@example.com',
    }
    expect(invitationProblem(null, T0, null)).toBe('invalid')
    expect(invitationProblem({ ...base, acceptedAt: at(1) }, at(8), null)).toBe('used')
    expect(invitationProblem({ ...base, revokedAt: at(1) }, at(8), null)).toBe('revoked')
    expect(invitationProblem(base, at(8), 'eve@example.com')).toBe('expired')
    expect(invitationProblem(base, at(1), 'eve@example.com')).toBe('wrong_email')
    expect(invitationProblem(base, at(1), 'Dan@Example.com')).toBeNull()
  })
})

describe('revoking, removing and roles', () => {
  test('only owners revoke, and only their own account’s invitations', async () => {
    const w = world()
    await invite(w)
    const id = w.rows[0]!.id
    expect(
      await revokeInvitation(w.deps, { accountId: 'acc-1', actorId: 'u-bob', id, now: T0 }),
    ).toMatchObject({
      failure: { code: 'forbidden' },
    })
    w.members.set('acc-2', [{ ...owner, userId: 'u-zoe' }])
    expect(
      await revokeInvitation(w.deps, { accountId: 'acc-2', actorId: 'u-zoe', id, now: T0 }),
    ).toMatchObject({
      failure: { code: 'not_found' },
    })
    expect(await revokeInvitation(w.deps, { accountId: 'acc-1', actorId: 'u-ann', id, now: T0 })).toEqual({
      ok: true,
      value: true,
    })
  })

  test('removeMember and changeRole go through the rules', async () => {
    const w = world()
    const input = { accountId: 'acc-1', actorId: 'u-ann', now: T0 }
    expect(await changeRole(w.deps, { ...input, userId: 'u-bob', role: 'admin' })).toEqual({
      ok: false,
      problem: 'invalid_role',
    })
    expect(await removeMember(w.deps, { ...input, userId: 'u-ann' })).toEqual({
      ok: false,
      problem: 'last_owner',
    })
    expect(await changeRole(w.deps, { ...input, userId: 'u-bob', role: 'owner' })).toMatchObject({ ok: true })
    expect(await removeMember(w.deps, { ...input, userId: 'u-ann' })).toMatchObject({ ok: true })
    expect(w.members.get('acc-1')!.map((m) => [m.userId, m.role])).toEqual([['u-bob', 'owner']])
  })
})
