import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import type { Viewer } from './layout.ts'
import {
  filterForm,
  fmt,
  type PeriodFilter,
  pager,
  periodParams,
  reportLayout,
  toIso,
} from './report-frame-views.ts'

// /reports/failures and /reports/failures/{id}: failure (forensic, RUF) reports as the API shows
// them. What is stored is already redacted (local parts of addresses replaced, unless the account
// turned that off) and never holds a message body: the pages show the stored report as it is.

type Row = Record<string, unknown>

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value))
const none = html`<span class="muted">–</span>`
const orNone = (value: unknown) => (text(value) === '' ? none : html`${text(value)}`)
const codeOrNone = (value: unknown) => (text(value) === '' ? none : html`<code>${text(value)}</code>`)
const listOrNone = (value: unknown) =>
  Array.isArray(value) && value.length > 0
    ? html`<ul class="plain">${value.map((v) => html`<li><code>${text(v)}</code></li>`)}</ul>`
    : none

const objectOf = (value: unknown): Row =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Row) : {}

/** When the report arrived at the receiver, else when it reached us. */
const whenOf = (row: Row) => toIso(row.arrival_at) ?? toIso(row.received_at)

export function failureListView(input: {
  viewer: Viewer
  domains: string[]
  domain: string | null
  period: PeriodFilter
  reports: Row[]
  total: number
  page: number
  lastPage: number
}): SafeHtml {
  const params = periodParams(input.period)
  if (input.domain !== null) params.set('domain', input.domain)
  const rows = input.reports.map((row) => {
    const original = objectOf(objectOf(row.report).original)
    return html`<tr><th scope="row"><a href="/reports/failures/${text(row.id)}">${time(whenOf(row))}</a></th>
<td>${text(row.domain)}</td><td>${codeOrNone(row.source_ip)}</td><td>${orNone(row.auth_failure)}</td>
<td>${orNone(row.delivery_result)}</td><td>${orNone(original.from)}</td><td>${orNone(original.subject)}</td></tr>`
  })
  const table =
    input.reports.length === 0
      ? html`<p class="panel">No failure reports match.</p>`
      : html`<div class="table-scroll"><table>
<caption class="skip">Failure reports</caption>
<thead><tr><th scope="col">Arrival</th><th scope="col">Domain</th><th scope="col">Source IP</th><th scope="col">Failure</th><th scope="col">Delivery</th><th scope="col">From</th><th scope="col">Subject</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
  const body = html`<h1>Failure reports</h1>
<p class="lead">Single failed messages reported by receivers (RUF, RFC 6591), newest first. Addresses are stored with their local parts redacted unless you turned that off; message bodies are never stored.</p>
${filterForm({
  action: '/reports/failures',
  label: 'Filter failure reports',
  domains: { names: input.domains, selected: input.domain, any: true },
  period: input.period,
})}
<h2>${fmt(input.total)} failure ${input.total === 1 ? 'report' : 'reports'}</h2>
${table}
${pager('/reports/failures', params, input.page, input.lastPage)}`
  return reportLayout({ title: 'Failure reports', viewer: input.viewer, tab: '/reports/failures', body })
}

export function failureDetailView(input: { viewer: Viewer; row: Row }): SafeHtml {
  const { row } = input
  const report = objectOf(row.report)
  const original = objectOf(report.original)
  const body = html`<p><a href="/reports/failures">← Failure reports</a></p>
<h1>Failure report for ${text(row.domain)}</h1>
${row.redacted === true ? html`<p class="lead">Local parts of addresses are redacted.</p>` : ''}
<section class="panel" aria-labelledby="failure"><h2 id="failure">What failed</h2>
<dl class="record">
<dt>Domain</dt><dd><a href="/domains/${text(row.domain)}">${text(row.domain)}</a></dd>
<dt>Arrival</dt><dd>${time(whenOf(row))}</dd>
<dt>Source IP</dt><dd>${codeOrNone(row.source_ip)}</dd>
<dt>Reported domain</dt><dd>${codeOrNone(row.reported_domain)}</dd>
<dt>Authentication failure</dt><dd>${orNone(row.auth_failure)}</dd>
<dt>Identity alignment</dt><dd>${listOrNone(report.identityAlignment)}</dd>
<dt>Delivery result</dt><dd>${orNone(row.delivery_result)}</dd>
<dt>DKIM</dt><dd>${report.dkimDomain ? html`<code>${text(report.dkimDomain)}</code>${report.dkimSelector ? html` s=<code>${text(report.dkimSelector)}</code>` : ''}${report.dkimIdentity ? html` i=<code>${text(report.dkimIdentity)}</code>` : ''}` : none}</dd>
<dt>SPF DNS</dt><dd>${codeOrNone(report.spfDns)}</dd>
<dt>Authentication-Results</dt><dd>${listOrNone(report.authenticationResults)}</dd>
</dl></section>
<section class="panel" aria-labelledby="message"><h2 id="message">The reported message</h2>
<dl class="record">
<dt>From</dt><dd>${orNone(original.from)}</dd>
<dt>To</dt><dd>${orNone(original.to)}</dd>
<dt>Subject</dt><dd>${orNone(original.subject)}</dd>
<dt>Date</dt><dd>${orNone(original.date)}</dd>
<dt>Message-ID</dt><dd>${codeOrNone(original.messageId)}</dd>
<dt>Envelope sender</dt><dd>${codeOrNone(report.originalMailFrom)}</dd>
<dt>Envelope recipients</dt><dd>${listOrNone(report.originalRcptTo)}</dd>
<dt>Reported URIs</dt><dd>${listOrNone(report.reportedUris)}</dd>
</dl></section>
<section class="panel" aria-labelledby="reporter"><h2 id="reporter">The report</h2>
<dl class="record">
<dt>Feedback type</dt><dd>${orNone(report.feedbackType)}</dd>
<dt>Format</dt><dd>${report.format === 'plain-text' ? 'plain text (no ARF part)' : 'ARF (RFC 5965)'}</dd>
<dt>Reporting MTA</dt><dd>${codeOrNone(report.reportingMta)}</dd>
<dt>User agent</dt><dd>${orNone(report.userAgent)}</dd>
<dt>Incidents</dt><dd>${fmt(Number(report.incidents ?? 1))}</dd>
<dt>Received</dt><dd>${time(toIso(row.received_at))}</dd>
</dl></section>`
  return reportLayout({
    title: `Failure report for ${text(row.domain)}`,
    viewer: input.viewer,
    tab: '/reports/failures',
    body,
  })
}
