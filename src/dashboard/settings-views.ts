import { tokenState } from '../../domain/accounts/api-token.ts'
import type { TokenRecord } from '../../domain/accounts/ports.ts'
import type { SessionRecord } from '../../domain/accounts/sessions.ts'
import type { EmbedKey } from '../../domain/embed/embed-key.ts'
import type { WebhookDelivery, WebhookSettings } from '../../domain/webhooks/settings.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout, type Viewer } from './layout.ts'

// Settings → API access (tokens) and Settings → Account (report address, members, sessions).

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
  webhook?: WebhookSectionInput
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
${input.embedKeys ? embedKeysSection({ keys: input.embedKeys, csrf, form: input.embedForm, publicUrl: input.publicUrl ?? '' }) : ''}
${input.webhook ? webhookSection(input.webhook, csrf) : ''}`
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

/** What the webhook section shows; `settings` null: no secret box, so webhooks are not available. */
export interface WebhookSectionInput {
  settings: WebhookSettings | null
  /** The newest deliveries (at most 10). */
  deliveries: WebhookDelivery[]
  form?: { url?: string; errors?: FieldErrors }
}

function webhookSection(input: WebhookSectionInput, csrf: SafeHtml): SafeHtml {
  const heading = html`<h2 id="webhooks">Webhooks</h2>`
  if (input.settings === null)
    return html`${heading}<p class="panel">Webhooks are not available on this server.</p>`
  const { settings } = input
  const errors = input.form?.errors ?? {}
  const url = input.form?.url ?? settings.url ?? ''
  const secret =
    settings.secret === null
      ? html`<p class="muted">No signing secret yet: it is created when you first save a URL.</p>`
      : html`<details><summary>Reveal the signing secret</summary>
<div class="copy-row"><code class="value secret" id="webhook-secret">${settings.secret}</code><button type="button" class="secondary" data-copy="webhook-secret" aria-label="Copy the signing secret">Copy</button></div>
</details>`
  const rows = input.deliveries.map((delivery) => {
    const last = delivery.attempts.at(-1)
    const action =
      delivery.status === 'pending'
        ? html`<button type="button" class="secondary" disabled>Pending: retries running</button>`
        : html`<form method="post" action="/settings/api/webhook/deliveries/${delivery.id}/redeliver">${csrf}<button type="submit" class="secondary" aria-label="Redeliver ${delivery.event} of ${delivery.createdAt.toISOString()}">Redeliver</button></form>`
    return html`<tr>
<th scope="row">${delivery.event}</th>
<td>${badge(delivery.status === 'delivered' ? 'ok' : delivery.status === 'failed' ? 'critical' : 'unknown', delivery.status)}</td>
<td>${delivery.attemptCount}</td>
<td>${last?.status ?? html`<span class="muted">none</span>`}</td>
<td>${last ? `${last.latencyMs} ms` : html`<span class="muted">none</span>`}</td>
<td>${time(delivery.createdAt)}</td>
<td>${action}</td></tr>`
  })
  return html`${heading}
<p>Events (alerts, reports, changes) are POSTed to your URL, signed with the secret below. See <a href="/swagger">the API reference</a> for the payloads.</p>
${errorSummary(errors, { webhook_url: 'Webhook URL' })}
<form method="post" action="/settings/api/webhook" class="inline panel" novalidate>
${csrf}
${field({ name: 'webhook_url', label: 'Webhook URL', type: 'url', value: url, hint: 'https only. Leave empty to turn webhooks off.', errors, extra: html` maxlength="2048"` })}
<div><button type="submit">Save URL</button></div>
</form>
<section class="panel" aria-labelledby="webhook-secret-title">
<h3 id="webhook-secret-title">Signing secret</h3>
${secret}
<form method="post" action="/settings/api/webhook/secret/rotate" class="actions" data-confirm="Rotate the signing secret? The old one stops working at once.">${csrf}<button type="submit" class="secondary">Rotate secret</button></form>
</section>
<form method="post" action="/settings/api/webhook/test" class="actions">${csrf}<button type="submit"${settings.url === null ? html` disabled` : ''}>Send test ping</button></form>
<h3>Recent deliveries</h3>
${
  input.deliveries.length === 0
    ? html`<p class="panel">No deliveries yet.</p>`
    : html`<table><thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last status code</th><th scope="col">Latency</th><th scope="col">Time</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table>`
}`
}

export function accountSettingsView(input: {
  viewer: Viewer
  reportAddress: string
  sessions: SessionRecord[]
  currentIdHash: string
  notice?: string | null
  /** The members and invitations (member-views.ts). */
  members?: SafeHtml
  /** The account switcher (member-views.ts). */
  switcher?: SafeHtml
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
${input.switcher ?? ''}
<section class="panel">
<h2>Report address</h2>
<p>Send your domains’ DMARC aggregate and failure reports here: add it to the <code>rua</code> (and <code>ruf</code>) tag of each DMARC record, e.g. <code>rua=mailto:${input.reportAddress}</code>.</p>
<div class="copy-row"><code class="value" id="report-address">${input.reportAddress}</code><button type="button" class="secondary" data-copy="report-address">Copy</button></div>
</section>
${input.members ?? ''}
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
