import type { InvitationProblem, InvitationRecord } from '../../domain/accounts/invitations.ts'
import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, layout, type Viewer } from './layout.ts'
import { ROLE_LABELS } from './member-views.ts'

// The page an invitation link opens, and the mail that carries the link.

const PROBLEMS: Record<Exclude<InvitationProblem, 'wrong_email'>, { title: string; message: string }> = {
  invalid: {
    title: 'This invitation link is not valid',
    message:
      'Check that you opened the whole link from the mail, or ask an owner of the account to invite you again.',
  },
  expired: {
    title: 'This invitation has expired',
    message: 'Invitation links are valid for 7 days. Ask an owner of the account to invite you again.',
  },
  used: {
    title: 'This invitation is already used',
    message:
      'An invitation link works once. If you accepted it, the account is in your account switcher under Settings → Account.',
  },
  revoked: {
    title: 'This invitation was revoked',
    message: 'An owner of the account withdrew it. Ask them to invite you again if you should have access.',
  },
}

export function invitationProblemStatus(problem: InvitationProblem): number {
  return problem === 'invalid' ? 404 : problem === 'wrong_email' ? 403 : 410
}

export function invitationProblemView(input: {
  problem: InvitationProblem
  invitation: InvitationRecord | null
  viewer: Viewer | null
}): SafeHtml {
  const { viewer, invitation } = input
  if (input.problem === 'wrong_email' && viewer !== null && invitation !== null) {
    const body = html`<h1>This invitation is for someone else</h1>
<p>It invites <strong>${invitation.email}</strong>, but you are logged in as <strong>${viewer.email}</strong>.</p>
<p>Log out, log in as ${invitation.email} (or sign up with that address), then open the link from the mail again.</p>
<form method="post" action="/logout" class="actions">${csrfField(viewer.csrfToken)}<button type="submit">Log out</button></form>`
    return layout({ title: 'Invitation', viewer, narrow: true, body })
  }
  const text = PROBLEMS[input.problem === 'wrong_email' ? 'invalid' : input.problem]
  const body = html`<h1>${text.title}</h1>
<p>${text.message}</p>
<p><a href="${viewer ? '/domains' : '/login'}">${viewer ? 'Back to your domains' : 'Go to the login page'}</a></p>`
  return layout({ title: 'Invitation', viewer, narrow: true, body })
}

function invitationFacts(invitation: InvitationRecord): SafeHtml {
  return html`<p>${invitation.invitedBy ?? 'An owner'} invited <strong>${invitation.email}</strong> to the dmarcwatch account of <strong>${invitation.accountLabel}</strong> as ${ROLE_LABELS[invitation.role].toLowerCase()}.</p>
<p class="muted">The invitation expires ${time(invitation.expiresAt)}.</p>`
}

/** Logged in with the invited email: one button joins. */
export function invitationJoinView(input: {
  invitation: InvitationRecord
  viewer: Viewer
  action: string
}): SafeHtml {
  const { invitation, viewer } = input
  const body = html`<h1>Join the account of ${invitation.accountLabel}</h1>
${invitationFacts(invitation)}
<form method="post" action="${input.action}" class="actions">${csrfField(viewer.csrfToken)}
<button type="submit">Join ${invitation.accountLabel}</button> <a href="/domains">Not now</a></form>`
  return layout({ title: 'Invitation', viewer, narrow: true, body })
}

/** Logged out: log in (or sign up) with the invited email, then come back. */
export function invitationLoginView(input: { invitation: InvitationRecord; path: string }): SafeHtml {
  const { invitation } = input
  const next = encodeURIComponent(input.path)
  const body = html`<h1>Join the account of ${invitation.accountLabel}</h1>
${invitationFacts(invitation)}
<p>To accept, log in as <strong>${invitation.email}</strong>; you come back here to join. No dmarcwatch login yet? Sign up with that address, then open the link from the mail again.</p>
<p class="actions"><a class="button" href="/login?next=${next}">Log in</a> <a href="/signup?next=${next}">Sign up</a></p>`
  return layout({ title: 'Invitation', viewer: null, narrow: true, body })
}

export function invitationMailText(input: {
  link: string
  publicUrl: string
  to: string
  accountLabel: string
  invitedBy: string
  role: string
  expiresAt: Date
}): string {
  return [
    `${input.invitedBy} invited you to their dmarcwatch account (the account of ${input.accountLabel}) as ${input.role}.`,
    '',
    'Accept the invitation here (the link works once, until ' +
      `${input.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC):`,
    input.link,
    '',
    `Log in, or sign up, as ${input.to} to accept it. If you did not expect this mail, ignore it.`,
    '',
    `dmarcwatch, ${input.publicUrl}`,
  ].join('\n')
}
