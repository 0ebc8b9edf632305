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

// /reports/list: a domain's aggregate reports over a period (the rows GET
// /api/v1/domains/{name}/reports returns), newest first, each linking to its detail page.

export function reportHref(domain: string, id: unknown): string {
  return `/reports/${String(id)}?${new URLSearchParams({ domain }).toString()}`
}

export function reportRows(domain: string, reports: Record<string, unknown>[]): SafeHtml {
  return html`${reports.map(
    (
      report,
    ) => html`<tr><th scope="row"><a href="${reportHref(domain, report.id)}">${String(report.reporter_org ?? '')}</a></th>
<td><code>${String(report.report_id ?? '')}</code></td>
<td>${time(toIso(report.begin_at))} – ${time(toIso(report.end_at))}</td>
<td class="num">${fmt(Number(report.record_count ?? 0))}</td>
<td class="num">${fmt(Number(report.message_count ?? 0))}</td>
<td>${time(toIso(report.created_at))}</td></tr>`,
  )}`
}

export function reportListView(input: {
  viewer: Viewer
  domains: string[]
  domain: string | null
  period: PeriodFilter
  reports: Record<string, unknown>[]
  total: number
  page: number
  lastPage: number
}): SafeHtml {
  const { domain, period } = input
  const params = periodParams(period)
  if (domain !== null) params.set('domain', domain)
  const table =
    input.reports.length === 0
      ? html`<p class="panel">No aggregate reports for ${domain} from ${period.period.from} to ${period.period.to}.</p>`
      : html`<div class="table-scroll"><table>
<caption class="skip">Aggregate reports of ${domain}</caption>
<thead><tr><th scope="col">Reporter</th><th scope="col">Report ID</th><th scope="col">Period</th><th scope="col" class="num">Records</th><th scope="col" class="num">Messages</th><th scope="col">Received</th></tr></thead>
<tbody>${reportRows(domain ?? '', input.reports)}</tbody></table></div>`
  const body = html`<h1>Aggregate reports</h1>
<p class="lead">DMARC aggregate (RUA) reports as the receivers sent them, one domain at a time.</p>
${
  input.domains.length === 0 && domain === null
    ? html`<p class="panel">No domains yet. <a href="/domains">Add one</a> and its reports appear here.</p>`
    : html`${filterForm({
        action: '/reports/list',
        label: 'Filter aggregate reports',
        domains: { names: input.domains, selected: domain },
        period,
      })}
<h2>${fmt(input.total)} ${input.total === 1 ? 'report' : 'reports'} for ${domain}, ${period.period.from} to ${period.period.to}</h2>
${table}
${pager('/reports/list', params, input.page, input.lastPage)}`
}`
  return reportLayout({ title: 'Aggregate reports', viewer: input.viewer, tab: '/reports/list', body })
}
