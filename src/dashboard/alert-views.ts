import type { AlertSeverity } from '../../domain/alerts/alert.ts'
import type { StoredAlert } from '../../domain/alerts/ports.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, layout, type Viewer } from './layout.ts'

// Alerts: the filtered list and one alert with its evidence, remedy and the resolve button.

export const SEVERITIES: readonly AlertSeverity[] = ['critical', 'high', 'medium', 'low', 'info']
export const STATUSES = ['open', 'resolved', 'all'] as const
export type AlertStatusFilter = (typeof STATUSES)[number]

export interface AlertListFilters {
  status: AlertStatusFilter
  severity: AlertSeverity | null
  domain: string
}

/** The query string of a list page (filters kept across pages). */
export function alertQuery(filters: AlertListFilters, page: number): string {
  const params = new URLSearchParams({ status: filters.status })
  if (filters.severity) params.set('severity', filters.severity)
  if (filters.domain) params.set('domain', filters.domain)
  if (page > 1) params.set('page', String(page))
  return params.toString()
}

export function alertListView(input: {
  viewer: Viewer
  alerts: StoredAlert[]
  total: number
  page: number
  lastPage: number
  filters: AlertListFilters
  domains: string[]
}): SafeHtml {
  const { filters } = input
  const selected = (on: boolean) => (on ? html` selected` : '')
  const form = html`<form method="get" action="/alerts" class="inline panel" aria-label="Filter alerts">
<div><label for="status">Status</label>
<select id="status" name="status">${STATUSES.map(
    (status) => html`<option value="${status}"${selected(filters.status === status)}>${status}</option>`,
  )}</select></div>
<div><label for="severity">Severity</label>
<select id="severity" name="severity"><option value="">any</option>${SEVERITIES.map(
    (severity) =>
      html`<option value="${severity}"${selected(filters.severity === severity)}>${severity}</option>`,
  )}</select></div>
<div><label for="domain">Domain</label>
<select id="domain" name="domain"><option value="">any</option>${input.domains.map(
    (name) => html`<option value="${name}"${selected(filters.domain === name)}>${name}</option>`,
  )}</select></div>
<div><button type="submit" class="secondary">Filter</button></div>
</form>`
  const rows = input.alerts.map(
    (alert) => html`<tr>
<td>${badge(alert.severity)}</td>
<th scope="row"><a href="/alerts/${alert.number}">${alert.title}</a></th>
<td>${alert.domain === null ? html`<span class="muted">account</span>` : html`<a href="/domains/${alert.domain}">${alert.domain}</a>`}</td>
<td>${badge(alert.status === 'open' ? 'warning' : 'ok', alert.status)}</td>
<td>${time(alert.createdAt)}</td>
<td>${alert.resolvedAt ? time(alert.resolvedAt) : html`<span class="muted">–</span>`}</td></tr>`,
  )
  const table =
    input.alerts.length === 0
      ? html`<p class="panel">No alerts match.</p>`
      : html`<table>
<caption class="skip">Alerts</caption>
<thead><tr><th scope="col">Severity</th><th scope="col">Alert</th><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Resolved</th></tr></thead>
<tbody>${rows}</tbody></table>`
  const pager =
    input.lastPage > 1
      ? html`<nav aria-label="Pages" class="actions">${input.page > 1 ? html`<a href="/alerts?${alertQuery(filters, input.page - 1)}">Previous</a>` : ''}<span>Page ${input.page} of ${input.lastPage}</span>${input.page < input.lastPage ? html`<a href="/alerts?${alertQuery(filters, input.page + 1)}">Next</a>` : ''}</nav>`
      : ''
  const body = html`<h1>Alerts</h1>
${form}
<h2>${input.total} ${input.total === 1 ? 'alert' : 'alerts'}</h2>
${table}
${pager}`
  return layout({ title: 'Alerts', viewer: input.viewer, current: '/alerts', body })
}

/** A JSON value as text: scalars as they are, lists joined, objects as compact JSON. */
function evidenceValue(value: unknown): SafeHtml {
  if (value === null || value === undefined) return html`<span class="muted">–</span>`
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null))
    return html`${value.map(String).join(', ')}`
  if (typeof value === 'object') return html`<code>${JSON.stringify(value)}</code>`
  return html`${String(value)}`
}

const labelOf = (key: string) => key.replaceAll('_', ' ')

export function alertDetailView(input: {
  viewer: Viewer
  alert: StoredAlert
  notice?: string | null
}): SafeHtml {
  const { alert, viewer } = input
  const details = alert.details as Record<string, unknown>
  const evidence =
    details.evidence !== null && typeof details.evidence === 'object' && !Array.isArray(details.evidence)
      ? Object.entries(details.evidence as Record<string, unknown>)
      : []
  const remedy = typeof details.remedy === 'string' ? details.remedy : null
  const fix = details.fix as { type?: string; name?: string; value?: string } | undefined
  const body = html`<h1>${alert.title}</h1>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
<section class="panel">
<dl class="record">
<dt>Severity</dt><dd>${badge(alert.severity)}</dd>
<dt>Status</dt><dd>${badge(alert.status === 'open' ? 'warning' : 'ok', alert.status)}${alert.resolution ? html` <span class="muted">(${alert.resolution === 'user' ? 'resolved by a user' : 'condition cleared'})</span>` : ''}</dd>
<dt>Domain</dt><dd>${alert.domain === null ? html`<span class="muted">the whole account</span>` : html`<a href="/domains/${alert.domain}">${alert.domain}</a>`}</dd>
<dt>Type</dt><dd><code>${alert.type}</code>${alert.subject ? html` <span class="muted">(${alert.subject})</span>` : ''}</dd>
<dt>Created</dt><dd>${time(alert.createdAt)}</dd>
<dt>Updated</dt><dd>${time(alert.updatedAt)}</dd>
<dt>Resolved</dt><dd>${alert.resolvedAt ? time(alert.resolvedAt) : html`<span class="muted">not yet</span>`}</dd>
</dl>
${
  alert.status === 'open'
    ? html`<form method="post" action="/alerts/${alert.number}/resolve" class="actions" data-confirm="Resolve this alert?">${csrfField(viewer.csrfToken)}<button type="submit">Resolve</button></form>`
    : ''
}
</section>
${remedy ? html`<section class="panel"><h2>What to do</h2><p>${remedy}</p>${fix?.value ? html`<div class="copy-row"><code class="value" id="fix-value">${fix.name ? `${fix.name} ${fix.type ?? ''} ` : ''}${fix.value}</code><button type="button" class="secondary" data-copy="fix-value">Copy</button></div>` : ''}</section>` : ''}
<section class="panel"><h2>Evidence</h2>
${
  evidence.length === 0
    ? html`<p class="muted">No evidence recorded.</p>`
    : html`<dl class="record">${evidence.map(([key, value]) => html`<dt>${labelOf(key)}</dt><dd>${evidenceValue(value)}</dd>`)}</dl>`
}</section>
<p><a href="/alerts">All alerts</a></p>`
  return layout({ title: alert.title, viewer, current: '/alerts', body })
}
