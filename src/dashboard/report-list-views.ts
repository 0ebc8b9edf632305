import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import type { Viewer } from './layout.ts'
import {
  filterForm,
  fmt,
  latestReportJump,
  type PeriodFilter,
  pager,
  periodParams,
  reportLayout,
  toIso,
} from './report-frame-views.ts'

// /reports/list: the aggregate reports of one domain, or of all the account's domains (the
// default), over a period (the rows GET /api/v1/domains/{name}/reports returns), newest first,
// each linking to its detail page.

export function reportHref(domain: string, id: unknown): string {
  return `/reports/${String(id)}?${new URLSearchParams({ domain }).toString()}`
}

/** Table rows of reports as the reader lists them (each row carries its domain's name). */
export function reportRows(reports: Record<string, unknown>[], showDomain = false): SafeHtml {
  return html`${reports.map((report) => {
    const domain = String(report.domain ?? '')
    return html`<tr><th scope="row"><a href="${reportHref(domain, report.id)}">${String(report.reporter_org ?? '')}</a></th>
${showDomain ? html`<td>${domain}</td>` : ''}<td><code>${String(report.report_id ?? '')}</code></td>
<td>${time(toIso(report.begin_at))} – ${time(toIso(report.end_at))}</td>
<td class="num">${fmt(Number(report.record_count ?? 0))}</td>
<td class="num">${fmt(Number(report.message_count ?? 0))}</td>
<td>${time(toIso(report.received_at))}</td></tr>`
  })}`
}

export function reportListView(input: {
  viewer: Viewer
  domains: string[]
  /** The domain chosen; null for all domains. */
  domain: string | null
  period: PeriodFilter
  reports: Record<string, unknown>[]
  total: number
  page: number
  lastPage: number
  /** When the period is empty: where the latest report (of the domain, or of any) begins. */
  latest?: Date | null
}): SafeHtml {
  const { domain, period } = input
  const params = periodParams(period)
  if (domain !== null) params.set('domain', domain)
  const all = domain === null
  const scope = all ? 'all domains' : domain
  const table =
    input.reports.length === 0
      ? html`<p class="panel">No aggregate reports for ${scope} from ${period.period.from} to ${period.period.to}.</p>
${latestReportJump(
  input.latest ?? null,
  (jump) =>
    `/reports/list?${new URLSearchParams({ ...(domain === null ? {} : { domain }), ...jump }).toString()}`,
  scope,
)}`
      : html`<div class="table-scroll"><table>
<caption class="skip">Aggregate reports of ${scope}</caption>
<thead><tr><th scope="col">Reporter</th>${all ? html`<th scope="col">Domain</th>` : ''}<th scope="col">Report ID</th><th scope="col">Period</th><th scope="col" class="num">Records</th><th scope="col" class="num">Messages</th><th scope="col">Received</th></tr></thead>
<tbody>${reportRows(input.reports, all)}</tbody></table></div>`
  const body = html`<h1>Aggregate reports</h1>
<p class="lead">DMARC aggregate (RUA) reports as the receivers sent them, for all your domains or one.</p>
${
  input.domains.length === 0 && all
    ? html`<p class="panel">No domains yet. <a href="/domains">Add one</a> and its reports appear here.</p>`
    : html`${filterForm({
        action: '/reports/list',
        label: 'Filter aggregate reports',
        domains: { names: input.domains, selected: domain, any: true },
        period,
      })}
<h2>${fmt(input.total)} ${input.total === 1 ? 'report' : 'reports'} for ${scope}, ${period.period.from} to ${period.period.to}</h2>
${table}
${pager('/reports/list', params, input.page, input.lastPage)}`
}`
  return reportLayout({ title: 'Aggregate reports', viewer: input.viewer, tab: '/reports/list', body })
}
