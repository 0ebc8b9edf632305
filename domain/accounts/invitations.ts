import { sha256 } from '@oslojs/crypto/sha2'
import { encodeBase64urlNoPadding, encodeHexLowerCase } from '@oslojs/encoding'
import { normalizeEmail } from '../shared/email-address.ts'
import type { RandomBytes } from '../shared/random.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { accountLabel, isRole, type MemberStore, type Role } from './members.ts'
import type { ActiveSession } from './sessions.ts'

// Invitations to an account (issue #8): an owner invites an email; the link mailed to it carries
// 32 random bytes of which only the SHA-256 is stored (like password reset links). It is single
// use, expires after 7 days, and joins only a user logged in with the invited email, so a
// forwarded or leaked link is worth nothing to anyone else.

export const INVITATION_LIFETIME_MS = 7 * 86_400_000

export interface Invitation {
  id: string
  accountId: string
  /** Normalised (lower case). */
  email: string
  role: Role
  /** The inviting owner's email; null once that user is gone. */
  invitedBy: string | null
  createdAt: Date
  expiresAt: Date
}

export interface InvitationRecord extends Invitation {
  acceptedAt: Date | null
  revokedAt: Date | null
  /** The name the account goes by (see accountLabel). */
  accountLabel: string
}

export interface InvitationStore {
  /** Voids the account's open invitations to the same email and stores this one, atomically. */
  create(invitation: {
    accountId: string
    email: string
    role: Role
    tokenHash: string
    invitedBy: string
    createdAt: Date
    expiresAt: Date
  }): Promise<Invitation>
  /** The account's invitations neither accepted nor revoked (expired ones included), newest first. */
  open(accountId: string): Promise<Invitation[]>
  /** Revokes an open invitation of the account; false when there is none with that id. */
  revoke(accountId: string, id: string, now: Date): Promise<boolean>
  findByTokenHash(tokenHash: string): Promise<InvitationRecord | null>
  /**
   * Spends the invitation if it is still open at `now` (of two concurrent uses one wins) and adds
   * the user to the account with its role (an existing membership keeps its role), atomically.
   * Returns the account, or null when the invitation was no longer open.
   */
  accept(tokenHash: string, userId: string, now: Date): Promise<string | null>
}

export interface InvitationMail {
  to: string
  /** Goes into the link; never stored. */
  token: string
  accountLabel: string
  invitedBy: string
  role: Role
  expiresAt: Date
}

// 32 random bytes, base64url.
const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/

export function hashInvitationToken(token: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(token)))
}

/**
 * An owner invites an email with a role. The answer is a failure value for a non-owner
 * (`forbidden`), a bad email or role, an email already in the account, or too many mails
 * (`admit` refuses: the form must not be a way to flood an inbox). The mail is sent before the
 * answer: if it cannot be sent the invitation is withdrawn and the owner is told.
 */
export async function inviteMember(
  deps: {
    members: Pick<MemberStore, 'list'>
    invitations: Pick<InvitationStore, 'create' | 'revoke'>
    random: RandomBytes
    admit: (email: string) => Promise<{ allowed: boolean; retryAfter: number }>
    sendInvitationMail: (mail: InvitationMail) => Promise<boolean>
  },
  input: { accountId: string; actorId: string; email: string; role: string; now: Date },
): Promise<Result<Invitation>> {
  const members = await deps.members.list(input.accountId)
  const actor = members.find((member) => member.userId === input.actorId)
  if (actor?.role !== 'owner') return fail({ code: 'forbidden', message: 'Only owners can invite members.' })
  const email = normalizeEmail(input.email)
  if (email === null) return invalid('email', 'Give a valid email address.')
  if (!isRole(input.role)) return invalid('role', 'Choose member or owner.')
  if (members.some((member) => member.email.toLowerCase() === email))
    return invalid('email', `${email} is already a member of this account.`)
  const admitted = await deps.admit(email)
  if (!admitted.allowed) return fail({ code: 'rate_limited', retryAfter: admitted.retryAfter })
  const token = encodeBase64urlNoPadding(deps.random(32))
  const invitation = await deps.invitations.create({
    accountId: input.accountId,
    email,
    role: input.role,
    tokenHash: hashInvitationToken(token),
    invitedBy: input.actorId,
    createdAt: input.now,
    expiresAt: new Date(input.now.getTime() + INVITATION_LIFETIME_MS),
  })
  const sent = await deps.sendInvitationMail({
    to: email,
    token,
    accountLabel: accountLabel(members),
    invitedBy: actor.email,
    role: invitation.role,
    expiresAt: invitation.expiresAt,
  })
  if (!sent) {
    await deps.invitations.revoke(input.accountId, invitation.id, input.now)
    return invalid('email', 'The invitation mail could not be sent. Try again later.')
  }
  return ok(invitation)
}

/** Owners revoke an open invitation of their account; its link stops working at once. */
export async function revokeInvitation(
  deps: { members: Pick<MemberStore, 'list'>; invitations: Pick<InvitationStore, 'revoke'> },
  input: { accountId: string; actorId: string; id: string; now: Date },
): Promise<Result<true>> {
  const members = await deps.members.list(input.accountId)
  if (members.find((member) => member.userId === input.actorId)?.role !== 'owner')
    return fail({ code: 'forbidden', message: 'Only owners can revoke invitations.' })
  const revoked = await deps.invitations.revoke(input.accountId, input.id, input.now)
  return revoked ? ok(true) : fail({ code: 'not_found', resource: 'invitation' })
}

export type InvitationProblem = 'invalid' | 'expired' | 'used' | 'revoked' | 'wrong_email'

/** Why the invitation cannot be accepted by `email` (null: no one is logged in yet), or null. */
export function invitationProblem(
  found: InvitationRecord | null,
  now: Date,
  email: string | null,
): InvitationProblem | null {
  if (found === null) return 'invalid'
  if (found.acceptedAt !== null) return 'used'
  if (found.revokedAt !== null) return 'revoked'
  if (found.expiresAt.getTime() <= now.getTime()) return 'expired'
  if (email !== null && email.toLowerCase() !== found.email) return 'wrong_email'
  return null
}

export type InvitationLookup =
  | { problem: null; invitation: InvitationRecord }
  | { problem: InvitationProblem; invitation: InvitationRecord | null }

/** What the invitation page shows: the invitation and, if it cannot be accepted by `email`, why. */
export async function lookUpInvitation(
  deps: { invitations: Pick<InvitationStore, 'findByTokenHash'> },
  input: { token: string; now: Date; email: string | null },
): Promise<InvitationLookup> {
  if (!INVITATION_TOKEN.test(input.token)) return { problem: 'invalid', invitation: null }
  const found = await deps.invitations.findByTokenHash(hashInvitationToken(input.token))
  const problem = invitationProblem(found, input.now, input.email)
  return problem === null ? { problem, invitation: found! } : { problem, invitation: found }
}

/**
 * The logged-in user accepts: they join the account with the invited role and their session moves
 * to it. Only a user with the invited email may; the link is spent only when they do.
 */
export async function acceptInvitation(
  deps: {
    invitations: Pick<InvitationStore, 'findByTokenHash' | 'accept'>
    members: Pick<MemberStore, 'switchSession'>
  },
  input: { token: string; session: Pick<ActiveSession, 'idHash' | 'userId' | 'email'>; now: Date },
): Promise<
  | { ok: true; accountId: string; label: string }
  | { ok: false; problem: InvitationProblem; invitation: InvitationRecord | null }
> {
  const lookup = await lookUpInvitation(deps, {
    token: input.token,
    now: input.now,
    email: input.session.email,
  })
  if (lookup.problem !== null) return { ok: false, ...lookup }
  const tokenHash = hashInvitationToken(input.token)
  const accountId = await deps.invitations.accept(tokenHash, input.session.userId, input.now)
  // A concurrent use (or a revocation) won meanwhile: tell which, as the page would.
  if (accountId === null) {
    const invitation = await deps.invitations.findByTokenHash(tokenHash)
    return { ok: false, problem: invitationProblem(invitation, input.now, null) ?? 'used', invitation }
  }
  await deps.members.switchSession(input.session.idHash, input.session.userId, accountId)
  return { ok: true, accountId, label: lookup.invitation.accountLabel }
}
