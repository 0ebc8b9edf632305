import { Elysia } from 'elysia'
import { inviteMember, revokeInvitation } from '../../domain/accounts/invitations.ts'
import {
  changeRole,
  type MemberChangeResult,
  removeMember,
  switchAccount,
} from '../../domain/accounts/members.ts'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { consume, type RateLimitPolicy } from '../../domain/rate-limits/fixed-window.ts'
import { errorFields } from '../../domain/shared/logger.ts'
import { formOf, sessionCookies, type sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import { invitationMailText } from './invitation-views.ts'
import { type FieldErrors, htmlResponse, messagePage, redirectTo } from './layout.ts'
import { accountSwitcher, membersSection, ROLE_LABELS } from './member-views.ts'
import type { DashboardServices } from './services.ts'
import { accountSettingsView } from './settings-views.ts'

// Settings → Account (issue #8): the report address, the members and pending invitations (owners
// invite, revoke, change roles and remove), the account switcher and the sessions.

/** Invitation mails per address, like reset mails: the form must not be a way to flood an inbox. */
export const INVITE_MAIL_POLICY: RateLimitPolicy = { scope: 'invite-mail', limit: 5, windowSeconds: 3600 }
/** And per account, so one account cannot mail a whole list of addresses. */
export const INVITE_ACCOUNT_POLICY: RateLimitPolicy = {
  scope: 'invite-account',
  limit: 30,
  windowSeconds: 3600,
}

const NOTICES: Record<string, string> = {
  invited: 'Invitation sent. It is listed under Pending invitations until it is used.',
  invitation_revoked: 'The invitation is revoked: its link no longer works.',
  removed:
    'The member is removed: their sessions in this account are ended and their API tokens here revoked.',
  role: 'The role is changed.',
  joined: 'You joined this account.',
}

export function memberStores(s: Pick<DashboardServices, 'members' | 'invitations'>) {
  return { members: s.members, invitations: s.invitations }
}

export function memberPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const stores = memberStores(s)
  const cookies = sessionCookies(s.config.publicUrl)

  const accountPage = async (
    session: ActiveSession,
    extra: {
      notice?: string | null
      form?: { email?: string; role?: string; errors?: FieldErrors }
      problem?: string
      status?: number
    } = {},
  ) => {
    const [key, list, members, invitations, accounts] = await Promise.all([
      s.accounts.ingestKeyOf(session.accountId),
      s.sessions.listForUser(session.userId, s.now()),
      stores.members.list(session.accountId),
      stores.invitations.open(session.accountId),
      stores.members.accountsOf(session.userId),
    ])
    const viewer = viewerOf(session)
    const view = accountSettingsView({
      viewer,
      reportAddress: `${key ?? 'unknown'}@${s.config.ingestDomain}`,
      sessions: list,
      currentIdHash: session.idHash,
      notice: extra.notice ?? null,
      members: membersSection({
        csrfToken: viewer.csrfToken,
        viewerId: session.userId,
        members,
        invitations,
        now: s.now(),
        form: extra.form,
        problem: extra.problem,
      }),
      switcher: accountSwitcher({
        csrfToken: viewer.csrfToken,
        accounts,
        currentAccountId: session.accountId,
      }),
    })
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  const refused = (session: ActiveSession, message: string) =>
    messagePage({ status: 403, title: 'Not allowed', message, viewer: viewerOf(session) })
  const notFound = (session: ActiveSession, message: string) =>
    messagePage({ status: 404, title: 'Not found', message, viewer: viewerOf(session) })

  const changed = (
    session: ActiveSession,
    result: MemberChangeResult | { ok: false; problem: 'invalid_role' },
  ) => {
    if (result.ok) return redirectTo('/settings/account?role=1#members')
    switch (result.problem) {
      case 'forbidden':
        return refused(session, 'Only owners of this account manage its members.')
      case 'not_found':
        return notFound(session, 'There is no such member in this account.')
      case 'last_owner':
        return accountPage(session, {
          problem: 'An account keeps at least one owner: make another member an owner first.',
          status: 400,
        })
      case 'invalid_role':
        return accountPage(session, { problem: 'Choose member or owner.', status: 400 })
    }
  }

  return new Elysia({ name: 'dashboard:members' })
    .use(sessions)
    .get(
      '/settings/account',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const others = Number(query.logged_out)
        const flag = Object.keys(NOTICES).find((key) => query[key] === '1')
        const notice =
          query.logged_out !== undefined && Number.isInteger(others)
            ? `Logged out ${others} other ${others === 1 ? 'session' : 'sessions'}.`
            : flag === undefined
              ? null
              : NOTICES[flag]
        return accountPage(session, { notice })
      },
      { session: true },
    )
    .post(
      '/settings/account/invitations',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const form = formOf(body)
        const email = form.get('email') ?? ''
        const role = form.get('role') ?? ''
        const result = await inviteMember(
          {
            ...stores,
            random: s.random,
            admit: async (address) => {
              for (const [policy, subject] of [
                [INVITE_ACCOUNT_POLICY, session.accountId],
                [INVITE_MAIL_POLICY, address],
              ] as const) {
                const decision = await consume(s, { policy, subject, now: s.now() })
                if (!decision.allowed) return decision
              }
              return { allowed: true, retryAfter: 0 }
            },
            sendInvitationMail: async (mail) => {
              const link = `${s.config.publicUrl}/invitations/${mail.token}`
              try {
                await s.mailer.send({
                  to: mail.to,
                  subject: `${mail.invitedBy} invited you to dmarcwatch`,
                  text: invitationMailText({
                    ...mail,
                    link,
                    publicUrl: s.config.publicUrl,
                    role: ROLE_LABELS[mail.role].toLowerCase(),
                  }),
                })
                return true
              } catch (error) {
                s.logger.error('invitation mail failed', errorFields(error))
                return false
              }
            },
          },
          { accountId: session.accountId, actorId: session.userId, email, role, now: s.now() },
        )
        if (result.ok) {
          s.logger.info('member invited', { account_id: session.accountId, invitation_id: result.value.id })
          return redirectTo('/settings/account?invited=1#invitations')
        }
        const { failure } = result
        if (failure.code === 'forbidden') return refused(session, failure.message)
        if (failure.code === 'rate_limited')
          return messagePage({
            status: 429,
            title: 'Too many invitations',
            message: `Too many invitations were sent. Wait ${failure.retryAfter} seconds and try again.`,
            viewer: viewerOf(session),
            headers: { 'retry-after': String(failure.retryAfter) },
          })
        const errors = failure.code === 'validation_failed' ? failure.errors : {}
        return accountPage(session, { form: { email, role, errors }, status: 400 })
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/account/invitations/:id/revoke',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const result = await revokeInvitation(stores, {
          accountId: session.accountId,
          actorId: session.userId,
          id: param(params.id),
          now: s.now(),
        })
        if (result.ok) return redirectTo('/settings/account?invitation_revoked=1#invitations')
        if (result.failure.code === 'forbidden') return refused(session, result.failure.message)
        return notFound(session, 'There is no such pending invitation in this account.')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/account/members/:userId/role',
      async ({ session, params, body, request }) => {
        noteAccount(request, session)
        const result = await changeRole(stores, {
          accountId: session.accountId,
          actorId: session.userId,
          userId: param(params.userId),
          role: formOf(body).get('role') ?? '',
          now: s.now(),
        })
        if (result.ok) s.logger.info('member role changed', { account_id: session.accountId })
        return changed(session, result)
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/account/members/:userId/remove',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const userId = param(params.userId)
        const result = await removeMember(stores, {
          accountId: session.accountId,
          actorId: session.userId,
          userId,
          now: s.now(),
        })
        if (!result.ok) return changed(session, result)
        s.logger.info('member removed', {
          account_id: session.accountId,
          ended_sessions: result.endedSessions,
          user_deleted: result.userDeleted,
        })
        // An owner who removed themselves has just ended this very session.
        if (userId === session.userId)
          return redirectTo('/login?logged_out=1', [cookies.clear(cookies.sessionName)])
        return redirectTo('/settings/account?removed=1#members')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/account/switch',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const accountId = formOf(body).get('account_id') ?? ''
        if (!(await switchAccount(stores, { session, accountId })))
          return notFound(session, 'You are not a member of that account.')
        s.logger.info('account switched', { account_id: accountId })
        return redirectTo('/domains')
      },
      { session: true, csrf: true },
    )
}
