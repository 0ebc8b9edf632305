import { tokenState } from '../../domain/accounts/api-token.ts'
import type { TokenRecord } from '../../domain/accounts/ports.ts'
import type { SessionRecord } from '../../domain/accounts/sessions.ts'
import type { EmbedKey } from '../../domain/embed/embed-key.ts'
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
  embedKeys?: EmbedKey[]
  embedForm?: { name?: string; origins?: string; errors?: FieldErrors }
  publicUrl?: string
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
${errorSummary(errors, { name: 'Token name', expires_in_days: 'Expiry' })}
<h2>Create a token</h2>
<form method="post" action="/settings/api/tokens" class="inline panel" novalidate>
${csrf}
${field({ name: 'name', label: 'Token name', value: input.form?.name ?? '', hint: 'Where it is used, e.g. “CI” or “laptop”.', required: true, errors, extra: html` maxlength="100"` })}
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
}
${input.embedKeys ? embedKeysSection({ keys: input.embedKeys, csrf, form: input.embedForm, publicUrl: input.publicUrl ?? '' }) : ''}`
  return layout({ title: 'API access', viewer, current: '/settings/api', body })
}

/** The widget snippet, as GET /api/v1/embed-keys gives it. */
export function embedSnippet(publicUrl: string, key: string): string {
  return `<div data-dmarcwatch-scanner></div>\n<script src="${publicUrl}/embed/widget.js" data-key="${key}" async></script>`
}

function embedKeysSection(input: {
  keys: EmbedKey[]
  csrf: SafeHtml
  form?: { name?: string; origins?: string; errors?: FieldErrors }
  publicUrl: string
}): SafeHtml {
  const errors = input.form?.errors ?? {}
  const originProblems = errors.allowed_origins ?? []
  const keys = input.keys.map(
    (key, i) => html`<section class="panel" aria-labelledby="embed-${i}">
<h3 id="embed-${i}">${key.name}</h3>
<dl class="record"><dt>Key</dt><dd><code>${key.key}</code></dd>
<dt>Allowed origins</dt><dd>${key.allowedOrigins.join(', ')}</dd>
<dt>Created</dt><dd>${time(key.createdAt)}</dd></dl>
<p>Paste into the page that shows the scanner:</p>
<div class="copy-row"><code class="value" id="embed-snippet-${i}">${embedSnippet(input.publicUrl, key.key)}</code><button type="button" class="secondary" data-copy="embed-snippet-${i}" aria-label="Copy the snippet of ${key.name}">Copy</button></div>
<form method="post" action="/settings/api/embed-keys/${key.id}/delete" class="actions" data-confirm="Delete the embed key “${key.name}”? Pages using it stop showing the scanner.">${input.csrf}<button type="submit" class="danger" aria-label="Delete ${key.name}">Delete</button></form>
</section>`,
  )
  return html`<h2 id="embed-keys">Embed keys</h2>
<p>An embed key puts the domain scanner widget on your own site. Keys are public (they are in the page); only the origins listed may use one.</p>
${errorSummary(errors, { embed_name: 'Embed key name', allowed_origins: 'Allowed origins' })}
<form method="post" action="/settings/api/embed-keys" class="stack panel" novalidate>
${input.csrf}
${field({ name: 'embed_name', label: 'Embed key name', value: input.form?.name ?? '', hint: 'Where it is used, e.g. “Marketing site”.', required: true, errors, extra: html` maxlength="100"` })}
<div><label for="allowed_origins">Allowed origins</label>
<p class="hint" id="allowed_origins-hint">One a line, scheme and host, e.g. https://www.example.com.</p>
<textarea id="allowed_origins" name="allowed_origins" rows="3" aria-describedby="allowed_origins-hint${originProblems.length ? ' allowed_origins-error' : ''}"${originProblems.length ? html` aria-invalid="true"` : ''}>${input.form?.origins ?? ''}</textarea>
${originProblems.length ? html`<p class="field-error" id="allowed_origins-error">${originProblems.join(' ')}</p>` : ''}</div>
<div><button type="submit">Create embed key</button></div>
</form>
${input.keys.length === 0 ? html`<p class="panel">No embed keys yet.</p>` : keys}`
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
