import type { Invitation } from '../../domain/accounts/invitations.ts'
import type { AccountChoice, Member, Role } from '../../domain/accounts/members.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field } from './layout.ts'

// Settings → Account: the members, the pending invitations with the invite form (owners only),
// and the account switcher for users in several accounts.

export const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', member: 'Member' }

export interface MembersSectionInput {
  csrfToken: string
  viewerId: string
  members: Member[]
  invitations: Invitation[]
  now: Date
  form?: { email?: string; role?: string; errors?: FieldErrors }
  /** A refused change, shown above the list. */
  problem?: string | null
}

function roleOptions(selected: string): SafeHtml[] {
  return (Object.keys(ROLE_LABELS) as Role[]).map(
    (role) =>
      html`<option value="${role}"${role === selected ? html` selected` : ''}>${ROLE_LABELS[role]}</option>`,
  )
}

export function membersSection(input: MembersSectionInput): SafeHtml {
  const csrf = csrfField(input.csrfToken)
  const isOwner = input.members.some((m) => m.userId === input.viewerId && m.role === 'owner')
  const owners = input.members.filter((m) => m.role === 'owner').length
  const rows = input.members.map((member) => {
    const you = member.userId === input.viewerId
    const lastOwner = member.role === 'owner' && owners === 1
    const controls = !isOwner
      ? ''
      : lastOwner
        ? html`<td><span class="muted">The only owner</span></td>`
        : html`<td><div class="actions">
<form method="post" action="/settings/account/members/${member.userId}/role" class="inline">${csrf}
<select name="role" aria-label="Role of ${member.email}">${roleOptions(member.role)}</select>
<button type="submit" class="secondary" aria-label="Change the role of ${member.email}">Change role</button></form>
<form method="post" action="/settings/account/members/${member.userId}/remove" data-confirm="Remove ${member.email} from this account? Their sessions in it end and their API tokens in it are revoked.">${csrf}<button type="submit" class="danger" aria-label="Remove ${member.email}">Remove</button></form>
</div></td>`
    return html`<tr${you ? html` aria-current="true"` : ''}>
<th scope="row">${member.email}${you ? html` <strong>(you)</strong>` : ''}</th>
<td>${badge(member.role === 'owner' ? 'ok' : 'unknown', ROLE_LABELS[member.role])}</td>
<td>${time(member.joinedAt)}</td>${controls}</tr>`
  })
  return html`<section class="panel" aria-labelledby="members">
<h2 id="members">Members</h2>
<p>Every member sees and manages the account’s domains, reports and API tokens. Owners also invite and remove members and change their roles.</p>
${input.problem ? html`<div class="error-summary" role="alert"><p>${input.problem}</p></div>` : ''}
<table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th>${isOwner ? html`<th scope="col"><span class="skip">Actions</span></th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>
${invitationsPart(input, csrf, isOwner)}
</section>`
}

function invitationsPart(input: MembersSectionInput, csrf: SafeHtml, isOwner: boolean): SafeHtml {
  const errors = input.form?.errors ?? {}
  const rows = input.invitations.map((invitation) => {
    const expired = invitation.expiresAt.getTime() <= input.now.getTime()
    return html`<tr>
<th scope="row">${invitation.email}</th>
<td>${ROLE_LABELS[invitation.role]}</td>
<td>${invitation.invitedBy ?? html`<span class="muted">a former member</span>`}</td>
<td>${expired ? badge('warning', 'expired') : time(invitation.expiresAt)}</td>
${
  isOwner
    ? html`<td><form method="post" action="/settings/account/invitations/${invitation.id}/revoke">${csrf}<button type="submit" class="secondary" aria-label="Revoke the invitation of ${invitation.email}">Revoke</button></form></td>`
    : ''
}</tr>`
  })
  const list =
    input.invitations.length === 0
      ? html`<p class="muted">No pending invitations.</p>`
      : html`<table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th>${isOwner ? html`<th scope="col"><span class="skip">Actions</span></th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>`
  const form = isOwner
    ? html`<h3>Invite a member</h3>
${errorSummary(errors, { email: 'Email', role: 'Role' })}
<form method="post" action="/settings/account/invitations" class="inline" novalidate>
${csrf}
${field({ name: 'email', label: 'Email', type: 'email', value: input.form?.email ?? '', hint: 'A link valid for 7 days is mailed there. Inviting again sends a new link.', required: true, errors, extra: html` maxlength="254" autocomplete="off"` })}
<div><label for="role">Role</label><select id="role" name="role">${roleOptions(input.form?.role ?? 'member')}</select></div>
<div><button type="submit">Send invitation</button></div>
</form>`
    : html`<p class="muted">Only owners invite and remove members.</p>`
  return html`<h3 id="invitations">Pending invitations</h3>
${list}
${form}`
}

export function accountSwitcher(input: {
  csrfToken: string
  accounts: AccountChoice[]
  currentAccountId: string
}): SafeHtml {
  const current = input.accounts.find((account) => account.accountId === input.currentAccountId)
  const heading = html`<h2 id="switch-account">Your accounts</h2>`
  if (input.accounts.length < 2)
    return html`<section class="panel" aria-labelledby="switch-account">${heading}
<p>You belong to this account only${current ? html` (the account of ${current.label})` : ''}.</p></section>`
  return html`<section class="panel" aria-labelledby="switch-account">${heading}
<p>You are in the account of <strong>${current?.label ?? 'unknown'}</strong>. Logging in opens your oldest account.</p>
<form method="post" action="/settings/account/switch" class="inline">${csrfField(input.csrfToken)}
<div><label for="account_id">Account</label><select id="account_id" name="account_id">${input.accounts.map(
    (account) =>
      html`<option value="${account.accountId}"${account.accountId === input.currentAccountId ? html` selected` : ''}>${account.label} (${ROLE_LABELS[account.role].toLowerCase()})</option>`,
  )}</select></div>
<div><button type="submit">Switch account</button></div>
</form></section>`
}
