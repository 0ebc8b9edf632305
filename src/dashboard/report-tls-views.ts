import type { TlsSummary } from '../../domain/reports/failure-tls-reads.ts'
import { dailySeries, volumeChart } from './chart-views.ts'
import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import type { Viewer } from './layout.ts'
import { filterForm, fmt, type PeriodFilter, pct, reportLayout } from './report-frame-views.ts'

// /reports/tls: a domain's SMTP TLS reports (RFC 8460) over a period, the same summary as
// GET /api/v1/domains/{name}/tls-reports: sessions per day with the success rate, the failure
// types seen and the reports themselves, each linking to its detail page (report-tls-detail-views.ts).

export function tlsView(input: {
  viewer: Viewer
  domains: string[]
  domain: string | null
  period: PeriodFilter
  summary: TlsSummary | null
}): SafeHtml {
  const { summary, period, domain } = input
  const body = html`<h1>TLS reports</h1>
<p class="lead">How other mail servers fared delivering to your domains over TLS (SMTP TLS reporting, RFC 8460), one domain at a time.</p>
${
  summary === null || domain === null
    ? html`<p class="panel">No domains yet. <a href="/domains">Add one</a> and publish a TLS-RPT record (<code>_smtp._tls</code>) to receive these reports.</p>`
    : html`${filterForm({
        action: '/reports/tls',
        label: 'Filter TLS reports',
        domains: { names: input.domains, selected: domain },
        period,
      })}
${summaryBody(summary, domain, period)}`
}`
  return reportLayout({ title: 'TLS reports', viewer: input.viewer, tab: '/reports/tls', body })
}

function summaryBody(summary: TlsSummary, domain: string, filter: PeriodFilter): SafeHtml {
  const { totals } = summary
  const sessions = totals.successful_sessions + totals.failed_sessions
  const points = dailySeries(
    filter.period,
    summary.daily.map((d) => ({
      day: d.day,
      messages: d.successful_sessions + d.failed_sessions,
      dmarc_pass: d.successful_sessions,
      dkim_aligned: 0,
      spf_aligned: 0,
    })),
  )
  const success = sessions === 0 ? null : Math.round((totals.successful_sessions / sessions) * 1000) / 10
  return html`<section class="panel" aria-labelledby="tls-totals"><h2 id="tls-totals">${domain}, ${filter.period.from} to ${filter.period.to}</h2>
<dl class="record">
<dt>Reports</dt><dd>${fmt(totals.reports)}</dd>
<dt>Successful sessions</dt><dd>${fmt(totals.successful_sessions)}</dd>
<dt>Failed sessions</dt><dd>${fmt(totals.failed_sessions)}</dd>
<dt>Success rate</dt><dd>${pct(success)}</dd>
</dl></section>
<section class="panel" aria-labelledby="tls-daily"><h2 id="tls-daily">Daily sessions and success rate</h2>
${
  sessions === 0
    ? html`<p class="muted">No TLS sessions reported in this period.</p>`
    : volumeChart(points, {
        id: 'tls-chart',
        title: 'Daily TLS sessions and success rate',
        noun: 'sessions',
        countLabel: 'Sessions per day',
        rateLabel: 'TLS success rate',
      })
}</section>
<section class="panel" aria-labelledby="tls-failures"><h2 id="tls-failures">Failure types</h2>
${
  summary.failure_types.length === 0
    ? html`<p class="muted">No failures reported.</p>`
    : html`<table><thead><tr><th scope="col">Result type</th><th scope="col" class="num">Failed sessions</th></tr></thead>
<tbody>${summary.failure_types.map(
        (f) =>
          html`<tr><th scope="row"><code>${f.result_type}</code></th><td class="num">${fmt(f.sessions)}</td></tr>`,
      )}</tbody></table>`
}</section>
<h2 id="tls-reports">Reports</h2>
${
  summary.reports.length === 0
    ? html`<p class="panel">No TLS reports in this period.</p>`
    : html`<div class="table-scroll"><table aria-describedby="tls-reports">
<thead><tr><th scope="col">Organization</th><th scope="col">Report ID</th><th scope="col">Period</th><th scope="col" class="num">Successful</th><th scope="col" class="num">Failed</th></tr></thead>
<tbody>${summary.reports.map(
        (
          r,
        ) => html`<tr id="tls-report-${r.id}"><th scope="row"><a href="/reports/tls/${r.id}">${r.organization}</a></th><td><code>${r.report_id}</code></td>
<td>${time(r.begin)} – ${time(r.end)}</td><td class="num">${fmt(r.successful_sessions)}</td><td class="num">${fmt(r.failed_sessions)}</td></tr>`,
      )}</tbody></table></div>
${summary.reports.length >= 50 ? html`<p class="muted">The latest 50 reports of the period are listed.</p>` : ''}`
}`
}
