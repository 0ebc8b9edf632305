import { tokenState } from '../../domain/accounts/api-token.ts'
import type { TokenRecord } from '../../domain/accounts/ports.ts'
import type { SessionRecord } from '../../domain/accounts/sessions.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout, type Viewer } from './layout.ts'

// Settings → API access (tokens) and Settings → Account (report address, sessions).

export const TOKEN_EXPIRY_CHOICES = [
  { value: '', label: 'Never' },
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
] as const

export function apiSettingsView(input: {
  viewer: Viewer
  tokens: TokenRecord[]
  now: Date
  created?: { name: string; value: string } | null
  form?: { name?: string; errors?: FieldErrors }
  notice?: string | null
}): SafeHtml {
  const { viewer } = input
  const csrf = csrfField(viewer.csrfToken)
  const errors = input.form?.errors ?? {}
  const created = input.created
    ? html`<section class="notice" role="status" aria-labelledby="new-token">
<h2 id="new-token">Token “${input.created.name}” created</h2>
<p>Copy it now: it is shown only this once. Use it as <code>Authorization: Bearer …</code>.</p>
<div class="copy-row"><code class="value secret" id="token-value">${input.created.value}</code><button type="button" class="secondary" data-copy="token-value">Copy</button></div>
</section>`
    : ''
  const rows = input.tokens.map((token) => {
    const state = tokenState(token, input.now)
    return html`<tr>
<th scope="row">${token.name}</th><td><code>${token.hint}</code></td>
<td>${badge(state === 'active' ? 'ok' : state === 'expired' ? 'warning' : 'unknown', state)}</td>
<td>${time(token.createdAt)}</td><td>${time(token.lastUsedAt)}</td>
<td>${token.expiresAt ? time(token.expiresAt) : html`<span class="muted">never</span>`}</td>
<td>${
      state === 'revoked'
        ? ''
        : html`<form method="post" action="/settings/api/tokens/${token.id}/revoke" data-confirm="Revoke the token “${token.name}”? Programs using it stop working.">${csrf}<button type="submit" class="danger" aria-label="Revoke ${token.name}">Revoke</button></form>`
    }</td></tr>`
  })
  const body = html`<h1>API access</h1>
<p class="lead">Tokens let programs use the API at <code>/api/v1</code> on behalf of your account. See <a href="/swagger">the API reference</a>.</p>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${created}
${errorSummary(errors, { name: 'Name', expires_in_days: 'Expiry' })}
<h2>Create a token</h2>
<form method="post" action="/settings/api/tokens" class="inline panel" novalidate>
${csrf}
${field({ name: 'name', label: 'Name', value: input.form?.name ?? '', hint: 'Where it is used, e.g. “CI” or “laptop”.', required: true, errors, extra: html` maxlength="100"` })}
<div><label for="expires_in_days">Expires</label>
<select id="expires_in_days" name="expires_in_days">${TOKEN_EXPIRY_CHOICES.map(
    (choice) => html`<option value="${choice.value}">${choice.label}</option>`,
  )}</select></div>
<div><button type="submit">Create token</button></div>
</form>
<h2>Tokens</h2>
${
  input.tokens.length === 0
    ? html`<p class="panel">No tokens yet.</p>`
    : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Token</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table>`
}`
  return layout({ title: 'API access', viewer, current: '/settings/api', body })
}

export function accountSettingsView(input: {
  viewer: Viewer
  reportAddress: string
  sessions: SessionRecord[]
  currentIdHash: string
  notice?: string | null
}): SafeHtml {
  const { viewer } = input
  const others = input.sessions.filter((session) => session.idHash !== input.currentIdHash).length
  const rows = input.sessions.map(
    (session) => html`<tr>
<td>${session.idHash === input.currentIdHash ? html`<strong>This browser</strong>` : ''} <span class="muted">${session.userAgent ?? 'unknown browser'}</span></td>
<td>${session.ip ?? ''}</td><td>${time(session.createdAt)}</td><td>${time(session.lastSeenAt)}</td></tr>`,
  )
  const body = html`<h1>Account</h1>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
<section class="panel">
<h2>Login</h2>
<p>You are logged in as <strong>${viewer.email}</strong>. <a href="/password-reset">Change your password</a> by email.</p>
</section>
<section class="panel">
<h2>Report address</h2>
<p>Send your domains’ DMARC aggregate and failure reports here: add it to the <code>rua</code> (and <code>ruf</code>) tag of each DMARC record, e.g. <code>rua=mailto:${input.reportAddress}</code>.</p>
<div class="copy-row"><code class="value" id="report-address">${input.reportAddress}</code><button type="button" class="secondary" data-copy="report-address">Copy</button></div>
</section>
<section class="panel">
<h2>Sessions</h2>
<p>Sessions end after 30 days without use.</p>
<table><thead><tr><th scope="col">Browser</th><th scope="col">IP address</th><th scope="col">Logged in</th><th scope="col">Last active</th></tr></thead>
<tbody>${rows}</tbody></table>
<form method="post" action="/settings/account/logout-others" data-confirm="Log out every other session?" class="actions">
${csrfField(viewer.csrfToken)}<button type="submit" class="secondary"${others === 0 ? html` disabled` : ''}>Log out other sessions</button>
<span class="muted">${others} other ${others === 1 ? 'session' : 'sessions'}</span></form>
</section>`
  return layout({ title: 'Account', viewer, current: '/settings/account', body })
}
