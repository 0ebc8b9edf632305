import {
  type ProviderKind,
  TSIG_ALGORITHMS,
  visibleSettings,
} from '../../domain/dns-providers/credentials.ts'
import type { DomainImport, ImportResult } from '../../domain/dns-providers/imports.ts'
import { type Connection, LABELS } from '../../domain/dns-providers/use-cases.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, layout, type Viewer } from './layout.ts'

// DNS providers: the connections with one connect form per provider kind, the removal confirmation,
// the zone picker of an import and the import's progress. Secrets are never rendered: secret fields
// are password inputs that are never filled back in, and settings come from visibleSettings().

interface CredentialField {
  key: string
  label: string
  hint?: string
  secret?: boolean
  optional?: boolean
  placeholder?: string
  choices?: readonly string[]
  /** The choice selected when nothing was chosen yet. */
  initial?: string
  multiline?: boolean
}

/** What each connect form asks for: the API's `credentials` (RFC 2136's server split into host and port). */
export const CONNECT_FORMS: Record<ProviderKind, { intro: string; fields: CredentialField[] }> = {
  powerdns: {
    intro: 'PowerDNS Authoritative with its HTTP API (api=yes, webserver=yes).',
    fields: [
      {
        key: 'base_url',
        label: 'API base URL',
        placeholder: 'https://dns.example.com:8081',
        hint: 'The webserver’s origin; https with a public address.',
      },
      {
        key: 'api_key',
        label: 'API key',
        secret: true,
        hint: 'The api-key of pdns.conf. Stored encrypted, never shown again.',
      },
      { key: 'server_id', label: 'Server id', optional: true, placeholder: 'localhost' },
    ],
  },
  rfc2136: {
    intro: 'Any primary server accepting dynamic updates signed with TSIG (BIND, Knot, PowerDNS).',
    fields: [
      {
        key: 'server',
        label: 'Server',
        placeholder: 'ns1.example.com',
        hint: 'Host name or address of the primary.',
      },
      { key: 'port', label: 'Port', optional: true, placeholder: '53' },
      { key: 'zones', label: 'Zones', multiline: true, hint: 'One a line: RFC 2136 cannot list zones.' },
      { key: 'key_name', label: 'TSIG key name', placeholder: 'dmarcwatch' },
      { key: 'key_algorithm', label: 'TSIG algorithm', choices: TSIG_ALGORITHMS, initial: 'hmac-sha256' },
      {
        key: 'key_secret',
        label: 'TSIG secret',
        secret: true,
        hint: 'Base64, as tsig-keygen prints it. Stored encrypted, never shown again.',
      },
      { key: 'transport', label: 'Transport', choices: ['tcp', 'udp'], initial: 'tcp' },
    ],
  },
  cloudflare: {
    intro: 'An API token with Zone → Zone → Read and Zone → DNS → Edit for the zones to manage.',
    fields: [
      { key: 'api_token', label: 'API token', secret: true, hint: 'Stored encrypted, never shown again.' },
      { key: 'account_id', label: 'Account id', optional: true, hint: 'Only for account-owned tokens.' },
      {
        key: 'base_url',
        label: 'API base URL',
        optional: true,
        hint: 'Leave empty for Cloudflare’s own API.',
      },
    ],
  },
}

const KINDS: ProviderKind[] = ['powerdns', 'rfc2136', 'cloudflare']

/** A connect form being shown again: what was typed (never the secret) and what was wrong. */
export interface ConnectForm {
  kind: ProviderKind
  values: Record<string, string>
  /** Keyed by field id (`<kind>-<key>`); `<kind>-form` for the form as a whole. */
  errors: FieldErrors
}

const fieldId = (kind: ProviderKind, key: string) => `${kind}-${key}`
const notice = (text: string | null | undefined) =>
  text ? html`<div class="notice" role="status">${text}</div>` : ''

function credentialInput(kind: ProviderKind, f: CredentialField, form: ConnectForm | null): SafeHtml {
  const id = fieldId(kind, f.key)
  const problems = form?.errors[id] ?? []
  const value = f.secret ? '' : (form?.values[f.key] ?? '')
  const described = [f.hint ? `${id}-hint` : '', problems.length ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ')
  const aria = html`${described ? html` aria-describedby="${described}"` : ''}${problems.length ? html` aria-invalid="true"` : ''}`
  const control = f.choices
    ? html`<select id="${id}" name="${f.key}"${aria}>${f.choices.map((c) => html`<option value="${c}"${(value || f.initial) === c ? html` selected` : ''}>${c}</option>`)}</select>`
    : f.multiline
      ? html`<textarea id="${id}" name="${f.key}" rows="3" spellcheck="false"${aria}>${value}</textarea>`
      : html`<input id="${id}" name="${f.key}" type="${f.secret ? 'password' : 'text'}" value="${value}" autocomplete="${f.secret ? 'new-password' : 'off'}" spellcheck="false"${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}${f.optional ? '' : html` required`}${aria}>`
  return html`<div><label for="${id}">${f.label}${f.optional ? html` <span class="hint">(optional)</span>` : ''}</label>
${f.hint ? html`<p class="hint" id="${id}-hint">${f.hint}</p>` : ''}${control}
${problems.length ? html`<p class="field-error" id="${id}-error">${problems.join(' ')}</p>` : ''}</div>`
}

function connectSection(kind: ProviderKind, csrf: SafeHtml, form: ConnectForm | null): SafeHtml {
  const spec = CONNECT_FORMS[kind]
  const mine = form?.kind === kind ? form : null
  const labels = Object.fromEntries(spec.fields.map((f) => [fieldId(kind, f.key), f.label]))
  labels[fieldId(kind, 'name')] = 'Name'
  return html`<section class="panel" aria-labelledby="connect-${kind}" id="connect-${kind}-section">
<h3 id="connect-${kind}">${LABELS[kind]}</h3>
<p class="hint">${spec.intro}</p>
${mine ? errorSummary(mine.errors, labels) : ''}
<form method="post" action="/dns-providers/connect" class="stack" novalidate>
${csrf}<input type="hidden" name="provider" value="${kind}">
${credentialInput(kind, { key: 'name', label: 'Name', optional: true, hint: 'A label for this connection.' }, mine)}
${spec.fields.map((f) => credentialInput(kind, f, mine))}
<div><button type="submit">Connect ${LABELS[kind]}</button></div>
</form></section>`
}

function settingsText(c: Connection): string {
  return Object.entries(visibleSettings(c.settings))
    .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k.replaceAll('_', ' ')}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join(' · ')
}

export function providerListView(input: {
  viewer: Viewer
  connections: Connection[]
  /** False without the secret box: nothing can be connected. */
  available: boolean
  /** False where no job queue runs: imports cannot start. */
  importsAvailable: boolean
  form?: ConnectForm | null
  notice?: string | null
}): SafeHtml {
  const csrf = csrfField(input.viewer.csrfToken)
  const rows = input.connections.map(
    (c) => html`<tr>
<th scope="row">${c.name}</th>
<td>${LABELS[c.provider]}${c.providerAccount ? html`<br><span class="muted">${c.providerAccount}</span>` : ''}</td>
<td><span class="muted">${settingsText(c)}</span></td>
<td class="num">${c.settings.provider === 'rfc2136' ? c.settings.zones.length : html`<span class="muted" title="Listed when you import">–</span>`}</td>
<td>${time(c.createdAt)}</td>
<td class="actions">${input.importsAvailable ? html`<a class="button" href="/dns-providers/${c.id}/import" aria-label="Import domains from ${c.name}">Import domains</a>` : ''}<a href="/dns-providers/${c.id}/delete" aria-label="Remove ${c.name}">Remove</a></td></tr>`,
  )
  const list =
    input.connections.length === 0
      ? html`<p class="panel">No DNS provider connected yet.</p>`
      : html`<table>
<caption class="skip">Connected DNS providers</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Provider</th><th scope="col">Settings</th><th scope="col">Zones</th><th scope="col">Connected</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table>`
  const body = html`<h1>DNS providers</h1>
<p class="lead">Connect the DNS of your domains: import its zones as domains, verified by writing their ownership record for you.</p>
${notice(input.notice)}
${input.importsAvailable ? '' : html`<p class="panel">Imports are unavailable on this server: no job queue runs in this process.</p>`}
<h2>${input.connections.length} ${input.connections.length === 1 ? 'connection' : 'connections'}</h2>
${list}
<h2>Connect a provider</h2>
${
  input.available
    ? html`<p>The credentials are checked with the provider before they are stored, encrypted; the key, token or secret is never shown again.</p>
<div class="areas">${KINDS.map((kind) => connectSection(kind, csrf, input.form ?? null))}</div>`
    : html`<p class="panel">DNS providers are not available on this server (no secret key to encrypt credentials).</p>`
}`
  return layout({ title: 'DNS providers', viewer: input.viewer, current: '/dns-providers', body })
}

export function removeConnectionView(input: { viewer: Viewer; connection: Connection }): SafeHtml {
  const { connection: c } = input
  const body = html`<p><a href="/dns-providers">← DNS providers</a></p>
<h1>Remove ${c.name}?</h1>
<section class="panel">
<p>dmarcwatch forgets this ${LABELS[c.provider]} connection and its credentials (the provider is not told) and its imports. Domains already imported stay in your account; writes made through it stay in the log.</p>
<form method="post" action="/dns-providers/${c.id}/delete" class="actions">${csrfField(input.viewer.csrfToken)}<button type="submit" class="danger">Remove connection</button><a href="/dns-providers">Cancel</a></form>
</section>`
  return layout({ title: `Remove ${c.name}`, viewer: input.viewer, current: '/dns-providers', body })
}

export interface ZoneChoice {
  name: string
  /** Why it cannot be picked: already a domain of the account, a reverse zone; null: importable. */
  present: 'domain' | 'reverse' | null
}

export function importChoiceView(input: {
  viewer: Viewer
  connection: Connection
  zones: ZoneChoice[]
  error?: string | null
}): SafeHtml {
  const { connection: c } = input
  const importable = input.zones.filter((z) => z.present === null).length
  const rows = input.zones.map(
    (z, i) => html`<tr>
<td><input type="checkbox" id="zone-${i}" name="zones" value="${z.name}"${z.present === null ? html` checked` : html` disabled`}></td>
<td><label for="zone-${i}">${z.name}</label></td>
<td>${z.present === 'domain' ? badge('unknown', 'already in your account') : z.present === 'reverse' ? badge('unknown', 'reverse zone') : badge('ok', 'new')}</td></tr>`,
  )
  const body = html`<p><a href="/dns-providers">← DNS providers</a></p>
<h1>Import domains from ${c.name}</h1>
<p class="lead">Each zone you choose becomes a domain; dmarcwatch writes its <code>_dmarcwatch</code> TXT record through ${LABELS[c.provider]} and verifies it. Each record counts as one DNS write against your per-minute limit: a large import waits for the next minute.</p>
${input.error ? html`<div class="error-summary" role="alert"><h2>There is a problem</h2><p>${input.error}</p></div>` : ''}
${
  input.zones.length === 0
    ? html`<p class="panel">${LABELS[c.provider]} lists no zones for these credentials.</p>`
    : html`<form method="post" action="/dns-providers/${c.id}/import">
${csrfField(input.viewer.csrfToken)}
<table><caption>${input.zones.length} ${input.zones.length === 1 ? 'zone' : 'zones'} at ${LABELS[c.provider]}, ${importable} new</caption>
<thead><tr><th scope="col">Import</th><th scope="col">Zone</th><th scope="col">State</th></tr></thead>
<tbody>${rows}</tbody></table>
<p class="actions">${importable > 0 ? html`<button type="submit">Import selected zones</button>` : html`<span class="muted">Every zone is already in your account.</span>`}<a href="/dns-providers">Cancel</a></p>
</form>`
}`
  return layout({ title: `Import from ${c.name}`, viewer: input.viewer, current: '/dns-providers', body })
}

const STATUS_BADGES = { queued: 'unknown', running: 'warning', done: 'ok', failed: 'critical' } as const
const RESULT_BADGES = { imported: 'ok', skipped: 'unknown', failed: 'critical' } as const

function verification(r: ImportResult, provider: string): SafeHtml {
  if (r.status === 'imported')
    return r.verified
      ? html`${badge('ok', 'verified')} <span class="muted">record written through ${provider} and seen over DNS</span>`
      : html`${badge('warning', 'not yet')} <span class="muted">${r.reason ?? ''} (checked again periodically)</span>`
  if (r.status === 'skipped' && r.reason === 'exists')
    return r.verified ? badge('ok', 'verified') : badge('unknown', 'not verified')
  return html`<span class="muted">–</span>`
}

function reasonOf(r: ImportResult): SafeHtml | string {
  if (r.status === 'imported') return ''
  if (r.reason === 'exists') return 'already in your account'
  return r.reason ?? ''
}

export function importProgressView(input: {
  viewer: Viewer
  job: DomainImport
  connectionName: string | null
  /** While the import runs, the page reloads itself every this many seconds. */
  refreshSeconds?: number
}): SafeHtml {
  const { job } = input
  const provider = LABELS[job.provider]
  const handled = job.imported + job.skipped + job.failed
  // Known once the job listed the zones; before that, the zones asked for (every zone: unknown).
  const total = job.total ?? job.zonesRequested?.length ?? null
  const running = job.status === 'queued' || job.status === 'running'
  const rows = job.results.map(
    (r) => html`<tr>
<th scope="row">${r.zone}</th>
<td>${r.domain !== null && r.status !== 'failed' ? html`<a href="/domains/${r.domain}">${r.domain}</a>` : (r.domain ?? html`<span class="muted">–</span>`)}</td>
<td>${badge(RESULT_BADGES[r.status], r.status)}</td>
<td>${reasonOf(r)}</td>
<td>${verification(r, provider)}</td></tr>`,
  )
  const body = html`<p><a href="/dns-providers">← DNS providers</a></p>
<h1>Import from ${input.connectionName ?? `a removed ${provider} connection`}</h1>
<section class="panel">
<p>${badge(STATUS_BADGES[job.status], job.status)} ${running ? html`<span class="muted">This page refreshes every 2 seconds until the import is finished.</span>` : job.status === 'done' ? html`Finished ${time(job.finishedAt)}. <a href="/domains">Go to your domains</a>.` : ''}</p>
${job.error ? html`<div class="error-summary" role="alert"><p>${job.error}</p></div>` : ''}
<p><label for="import-progress">${total === null ? `${handled} zones handled` : `${handled} of ${total} zones handled`}</label>
<progress id="import-progress" max="${total ?? 1}"${total === null ? '' : html` value="${handled}"`}>${handled} of ${total ?? '?'}</progress></p>
<dl class="record"><dt>Imported</dt><dd>${job.imported}</dd><dt>Skipped</dt><dd>${job.skipped}</dd><dt>Failed</dt><dd>${job.failed}</dd><dt>Pending</dt><dd>${total === null ? '–' : Math.max(0, total - handled)}</dd>
<dt>Started</dt><dd>${time(job.startedAt)}</dd></dl>
</section>
<h2>Zones</h2>
${
  rows.length === 0
    ? html`<p class="panel muted">${running ? 'Waiting for the first zone…' : 'No zones were handled.'}</p>`
    : html`<table><caption class="skip">Zones of this import</caption>
<thead><tr><th scope="col">Zone</th><th scope="col">Domain</th><th scope="col">Result</th><th scope="col">Reason</th><th scope="col">Ownership</th></tr></thead>
<tbody>${rows}</tbody></table>`
}`
  return layout({
    title: 'Domain import',
    viewer: input.viewer,
    current: '/dns-providers',
    body,
    refreshSeconds: input.refreshSeconds,
  })
}
