import type { Page } from '../../domain/shared/pagination.ts'
import { formatCount } from '../../domain/sources/figures.ts'
import type { IncludeTreeNode } from '../../domain/spf/analysis.ts'
import type { ManagedView } from '../../domain/spf-management/managed-change.ts'
import type { SourceProposal } from '../../domain/spf-management/source-detection.ts'
import { sourceTerm } from '../../domain/spf-management/sources.ts'
import type { SpfOverview, VersionEntry } from '../../domain/spf-management/use-cases.ts'
import type { UserRecord } from '../../domain/spf-management/user-record.ts'
import { badge, copyable, domainTabs, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout, type Viewer } from './layout.ts'
import { providerSection, type SpfProviderView } from './spf-provider-views.ts'

// /domains/{name}/spf: the published record with its include tree and lookup count, SPF
// management (activate, settings, the record to publish), sources to add and the version history
// with rollback. The figures are those of GET /api/v1/domains/{name}/spf and …/spf/versions.

export interface SpfPageInput {
  viewer: Viewer
  /** `user:<id>` of the viewer, to name their own changes "you". */
  actor: string
  overview: SpfOverview
  versions: Page<VersionEntry> | null
  versionsPage: number
  versionsPerPage: number
  /** Detected sources; null when not looked for (automatic domains detect and apply on request). */
  proposals: SourceProposal[] | null
  notice?: string | null
  error?: { message: string; errors: FieldErrors } | null
  /** What the add-a-source form held when it was refused. */
  addForm?: { source?: string; include?: string; network?: string }
  /** An unmanaged domain's record with an added source: nothing was stored, the user publishes it. */
  proposedRecord?: UserRecord | null
  /** Proposals and writes through a connected DNS provider holding the zone; null when none does. */
  provider?: SpfProviderView | null
}

const ADD_LABELS = { source: 'Source IP', include: 'Include instead', network: 'Network instead' }

/** The lookup count against RFC 7208's limit of 10 (§4.6.4): over it, receivers return permerror. */
function lookupBadge(lookups: number, limit: number): SafeHtml {
  const state = lookups > limit ? 'error' : lookups >= limit - 1 ? 'warning' : 'ok'
  return badge(state, `${lookups} of ${limit} DNS lookups`)
}

function publishRecord(domain: string, id: string, publish: UserRecord): SafeHtml {
  return html`<dl class="record"><dt>Type</dt><dd>TXT</dd>
<dt>Name</dt><dd>${copyable(`${id}-name`, domain)}</dd>
<dt>Value</dt><dd>${copyable(`${id}-value`, publish.record)}</dd></dl>
${publish.note ? html`<p class="muted">Note: ${publish.note}.</p>` : ''}`
}

function treeNode(node: IncludeTreeNode): SafeHtml {
  return html`<li><code>${node.domain}</code>${node.term ? html` <span class="muted">via <code>${node.term}</code></span>` : ''} ${badge(node.status === 'ok' ? 'ok' : 'error', node.status.replaceAll('_', ' '))}
<span class="muted">${formatCount(node.lookups)} ${node.lookups === 1 ? 'lookup' : 'lookups'} here, ${formatCount(node.branchLookups)} with everything below</span>
${node.record ? html`<br><code class="value">${node.record}</code>` : ''}${node.reason ? html`<br><span class="muted">${node.reason}</span>` : ''}
${node.children.length ? html`<ul>${node.children.map(treeNode)}</ul>` : ''}</li>`
}

function publishedSection(overview: SpfOverview): SafeHtml {
  const { published, analysis, domain } = overview
  return html`<section class="panel" aria-labelledby="published"><h2 id="published">Published record ${badge(published.status === 'ok' ? 'ok' : published.status === 'none' ? 'missing' : 'error', published.status)}</h2>
${published.record ? html`<code class="value" id="published-record">${published.record}</code>` : html`<p>No SPF record is published at ${domain.name}.</p>`}
${published.reason ? html`<p class="muted">${published.reason}</p>` : ''}
<p>${lookupBadge(analysis.lookups, analysis.lookupLimit)} for one evaluation, worst case (RFC 7208 §4.6.4: more than ${analysis.lookupLimit} and receivers return a permanent error). Void lookups: ${analysis.voidLookups} of ${analysis.voidLookupLimit}.</p>
${analysis.warnings.length ? html`<ul>${analysis.warnings.map((w) => html`<li>${badge(w.severity === 'info' ? 'info' : w.severity)} ${w.message}</li>`)}</ul>` : ''}
<h3>Include tree</h3>
<ul class="tree">${treeNode(analysis.tree)}</ul>
</section>`
}

function settingsFields(current: ManagedView | null): SafeHtml {
  const all = current?.state.config.all ?? null
  const flatten = current?.state.config.flatten ?? 'auto'
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`
  return html`<div><label for="all">Mail from other servers</label>
<select id="all" name="all">${current ? '' : option('', 'As my record says now', true)}${option('-all', 'Fail (-all)', all === '-all')}${option('~all', 'Soft fail (~all)', all === '~all')}</select></div>
<div><label for="flatten">Flattening</label>
<select id="flatten" name="flatten">${option('auto', 'Automatic: only past 10 lookups', flatten === 'auto')}${option('always', 'Always', flatten === 'always')}${option('never', 'Never', flatten === 'never')}</select></div>`
}

function managementSection(input: SpfPageInput): SafeHtml {
  const { overview, viewer } = input
  const { domain, managed } = overview
  const action = `/domains/${domain.name}/spf/activate`
  if (managed === null) {
    return html`<section class="panel" aria-labelledby="management"><h2 id="management">SPF management ${badge('unknown', 'not active')}</h2>
<p>dmarcwatch can serve your senders from a record of its own that you include once. Adding a sender later is a click here, never a DNS edit, and past 10 lookups the record is flattened to addresses so receivers never stop at the limit.</p>
${
  domain.verified
    ? html`<form method="post" action="${action}" class="inline">${csrfField(viewer.csrfToken)}
${settingsFields(null)}
<div><button type="submit">Activate SPF management</button></div></form>`
    : html`<p>Verify ownership of ${domain.name} first: SPF changes are only made for verified domains. <a href="/domains/${domain.name}">Verification instructions</a>.</p>`
}
</section>`
  }
  const { state, publish } = managed
  const total = state.records.lookups + publish.lookups
  return html`<section class="panel" aria-labelledby="management"><h2 id="management">SPF management ${badge('ok', 'active')}</h2>
<p>Version ${state.version}, active since ${time(state.activatedAt)}, planned ${time(state.plannedAt)}.</p>
<h3>Publish this record at ${domain.name}</h3>
${publish.changed ? html`<p>Replace your SPF record with this one: it includes the record dmarcwatch serves.</p>` : html`<p>Your published record already includes <code>${state.hostedName}</code>: nothing to change.</p>`}
${publishRecord(domain.name, 'publish', publish)}
<p>${lookupBadge(total, 10)} once published: ${formatCount(publish.lookups)} in your record, ${formatCount(state.records.lookups)} in the managed one.</p>
<h3>The managed record</h3>
<dl class="record"><dt>Served at</dt><dd><code>${state.hostedName}</code></dd>
<dt>Sources</dt><dd>${state.config.sources.length ? html`<ul>${state.config.sources.map((s) => html`<li><code>${sourceTerm(s)}</code>${s.label ? html` <span class="muted">${s.label}</span>` : ''}</li>`)}</ul>` : html`<span class="muted">None</span>`}</dd>
<dt>Flattened</dt><dd>${state.records.flattened ? `yes, ${formatCount(state.records.networks)} networks` : 'no'}</dd></dl>
${state.records.records.map((r) => html`<p><code>${r.name}</code> TXT <code class="value">${r.text}</code></p>`)}
${state.records.caveats.length ? html`<ul>${state.records.caveats.map((c) => html`<li>${c}</li>`)}</ul>` : ''}
<details><summary>Settings</summary>
<form method="post" action="${action}" class="inline">${csrfField(viewer.csrfToken)}
${settingsFields(managed)}
<div><button type="submit" class="secondary">Save settings</button></div></form></details>
</section>`
}

function proposalRows(input: SpfPageInput, proposals: SourceProposal[]): SafeHtml {
  const { domain } = input.overview
  return html`<table><caption class="skip">Detected sources</caption>
<thead><tr><th scope="col">Add</th><th scope="col">Service</th><th scope="col">Addresses</th><th scope="col" class="num">Messages</th><th scope="col" class="num">Failing SPF</th><th scope="col"></th></tr></thead>
<tbody>${proposals.map(
    (p) => html`<tr><th scope="row"><code>${sourceTerm(p.source)}</code></th>
<td>${p.service?.name ?? html`<span class="muted">Unidentified</span>`}</td>
<td>${p.ips.map((ip, i) => html`${i ? ', ' : ''}<code>${ip}</code>`)}</td>
<td class="num">${formatCount(p.messages)}</td><td class="num">${formatCount(p.spfFailing)}</td>
<td><form method="post" action="/domains/${domain.name}/spf/sources">${csrfField(input.viewer.csrfToken)}<input type="hidden" name="source" value="${p.ips[0] ?? ''}"><button type="submit" class="secondary">Add ${sourceTerm(p.source)}</button></form></td></tr>`,
  )}</tbody></table>`
}

function sourcesSection(input: SpfPageInput): SafeHtml {
  const { domain, managed } = input.overview
  const errors = input.error?.errors ?? {}
  const form = input.addForm ?? {}
  const detected =
    input.proposals === null
      ? html`<p>At automation level “automatic” detected sources are added as soon as they are found.</p>
<form method="post" action="/domains/${domain.name}/spf/detect">${csrfField(input.viewer.csrfToken)}<button type="submit" class="secondary">Detect and add sources now</button></form>`
      : input.proposals.length === 0
        ? html`<p class="muted">No sender of the last 30 days needs adding: every legitimate source is authorised already.</p>`
        : proposalRows(input, input.proposals)
  return html`<section class="panel" aria-labelledby="add-source"><h2 id="add-source">Add a source</h2>
<p>${managed ? 'A source is added to the managed record as a new version.' : 'Your SPF is not managed: adding a source gives the record to publish yourself; nothing is stored.'} Detected from the last 30 days of reports: senders that look legitimate but fail SPF.</p>
${detected}
${
  input.proposedRecord
    ? html`<div class="notice" role="status"><p>Publish this record at ${domain.name} to authorise the source:</p>${publishRecord(domain.name, 'proposed', input.proposedRecord)}</div>`
    : ''
}
<details${input.addForm ? html` open` : ''}><summary>Another source</summary>
<form method="post" action="/domains/${domain.name}/spf/sources" class="stack" novalidate>${csrfField(input.viewer.csrfToken)}
${field({ name: 'source', label: ADD_LABELS.source, value: form.source ?? '', hint: 'An address that sent mail as this domain in the last 90 days (see Sources).', errors, required: true })}
${field({ name: 'include', label: ADD_LABELS.include, value: form.include ?? '', hint: 'Optional: authorise this include (for example sendgrid.net) rather than what the address suggests.', errors })}
${field({ name: 'network', label: ADD_LABELS.network, value: form.network ?? '', hint: 'Optional: authorise a network holding the address (for example 192.0.2.0/24).', errors })}
<div><button type="submit">Add source</button></div></form></details>
</section>`
}

function changesOf(entry: VersionEntry): SafeHtml {
  const parts = [
    ...entry.changes.added.map((s) => html`<li>added <code>${sourceTerm(s)}</code></li>`),
    ...entry.changes.removed.map((s) => html`<li>removed <code>${sourceTerm(s)}</code></li>`),
    ...entry.changes.settings.map((name) => html`<li>${name} set to <code>${entry.config[name]}</code></li>`),
  ]
  return parts.length ? html`<ul>${parts}</ul>` : html`<span class="muted">no change</span>`
}

function historySection(input: SpfPageInput): SafeHtml {
  const { versions, overview } = input
  if (versions === null) return html``
  const name = overview.domain.name
  const who = (actor: string) =>
    actor === input.actor ? 'you' : actor.startsWith('user:') ? 'another user' : actor
  const last = Math.max(1, Math.ceil(versions.total / input.versionsPerPage))
  const link = (page: number) => `/domains/${name}/spf?versions_page=${page}#history`
  return html`<section class="panel" aria-labelledby="history"><h2 id="history">Version history</h2>
<table><caption class="skip">Versions of the managed SPF record, newest first</caption>
<thead><tr><th scope="col">Version</th><th scope="col">When</th><th scope="col">By</th><th scope="col">Why</th><th scope="col">Changes</th><th scope="col"></th></tr></thead>
<tbody>${versions.items.map(
    (
      v,
    ) => html`<tr><th scope="row">${v.version}</th><td>${time(v.createdAt)}</td><td>${who(v.actor)}</td><td>${v.reason}</td><td>${changesOf(v)}</td>
<td>${
      v.current
        ? badge('ok', 'current')
        : html`<form method="post" action="/domains/${name}/spf/rollback" data-confirm="Serve version ${v.version} again? A new version is saved with its sources and records.">${csrfField(input.viewer.csrfToken)}<input type="hidden" name="version" value="${v.version}"><button type="submit" class="secondary">Roll back to this version<span class="skip"> (version ${v.version})</span></button></form>`
    }</td></tr>`,
  )}</tbody></table>
${last > 1 ? html`<nav aria-label="Versions pages" class="actions">${input.versionsPage > 1 ? html`<a href="${link(input.versionsPage - 1)}">Newer</a>` : ''}<span>Page ${input.versionsPage} of ${last}</span>${input.versionsPage < last ? html`<a href="${link(input.versionsPage + 1)}">Older</a>` : ''}</nav>` : ''}
</section>`
}

/** Field errors linked to the add-a-source fields; any other refusal as its message. */
function errorBlock(error: SpfPageInput['error']): SafeHtml {
  if (error === null || error === undefined) return html``
  if (Object.keys(error.errors).length > 0) return errorSummary(error.errors, ADD_LABELS)
  return html`<div class="error-summary" role="alert"><h2>There is a problem</h2><p>${error.message}</p></div>`
}

export function spfPageView(input: SpfPageInput): SafeHtml {
  const name = input.overview.domain.name
  const body = html`<p><a href="/domains/${name}">← ${name}</a></p>
<h1>SPF of ${name}</h1>
${domainTabs(name, 'spf')}
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${errorBlock(input.error ?? null)}
${publishedSection(input.overview)}
${managementSection(input)}
${providerSection(name, input.provider ?? null, input.viewer.csrfToken)}
${sourcesSection(input)}
${historySection(input)}`
  return layout({ title: `SPF of ${name}`, viewer: input.viewer, current: '/domains', body })
}
