import type { Summary } from '../../domain/reports/aggregate-reads.ts'
import type { Period } from '../../domain/reports/period.ts'
import { dailySeries, volumeChart } from './chart-views.ts'
import { html, type SafeHtml } from './html.ts'
import type { Viewer } from './layout.ts'
import { fmt, latestReportJump, pct, reportLayout } from './report-frame-views.ts'
import { reportRows } from './report-list-views.ts'

// /reports: the account's last 30 days (the same figures as GET /api/v1/dmarc-reports/overview),
// the daily chart (chart-views.ts) with the data as a table,
// and each domain's recent reports.

export interface DomainReports {
  name: string
  reports: Record<string, unknown>[]
  total: number
}

export function reportsView(input: {
  viewer: Viewer
  period: Period
  summary: Summary
  domains: DomainReports[]
  moreDomains: boolean
  /** When the period holds no report: where the account's latest report begins. */
  latest?: Date | null
}): SafeHtml {
  const { summary, period } = input
  const points = dailySeries(period, summary.daily)
  const total = summary.totals.messages
  const share = (n: number) => (total === 0 ? '–' : `${((n / total) * 100).toFixed(1)}%`)
  const domainSections = input.domains.map(
    (
      d,
    ) => html`<section class="panel"><h3><a href="/domains/${d.name}">${d.name}</a> <span class="muted">(${d.total} ${d.total === 1 ? 'report' : 'reports'})</span></h3>
${
  d.reports.length === 0
    ? html`<p class="muted">No reports in this period.</p>`
    : html`<table><thead><tr><th scope="col">Reporter</th><th scope="col">Report ID</th><th scope="col">Period</th><th scope="col" class="num">Records</th><th scope="col" class="num">Messages</th><th scope="col">Received</th></tr></thead>
<tbody>${reportRows(d.reports)}</tbody></table>
${d.total > d.reports.length ? html`<p><a href="/reports/list?${new URLSearchParams({ domain: d.name }).toString()}">All ${d.total} reports of ${d.name}</a></p>` : ''}`
}</section>`,
  )
  const body = html`<h1>Reports</h1>
<p class="lead">DMARC aggregate reports of all your domains, ${period.from} to ${period.to} (UTC).</p>
${
  summary.totals.reports === 0
    ? latestReportJump(
        input.latest ?? null,
        (jump) => `/reports/list?${new URLSearchParams({ from: jump.from, to: jump.to }).toString()}`,
        'your domains',
      )
    : ''
}
<section class="panel" aria-labelledby="totals"><h2 id="totals">Totals</h2>
<dl class="record">
<dt>Messages</dt><dd>${fmt(total)}</dd>
<dt>Reports</dt><dd>${fmt(summary.totals.reports)}</dd>
<dt>DMARC pass rate</dt><dd>${pct(summary.rates.dmarc_pass)}</dd>
<dt>DKIM aligned</dt><dd>${pct(summary.rates.dkim_aligned)}</dd>
<dt>SPF aligned</dt><dd>${pct(summary.rates.spf_aligned)}</dd>
</dl></section>
<section class="panel" aria-labelledby="daily"><h2 id="daily">Daily volume and pass rate</h2>
${total === 0 ? html`<p class="muted">No messages reported in this period.</p>` : volumeChart(points)}
<details><summary>The figures as a table</summary>
<table><caption class="skip">Messages and DMARC pass rate per day</caption>
<thead><tr><th scope="col">Day</th><th scope="col" class="num">Messages</th><th scope="col" class="num">DMARC pass</th><th scope="col" class="num">Pass rate</th></tr></thead>
<tbody>${points.map(
    (p) =>
      html`<tr><th scope="row">${p.day}</th><td class="num">${fmt(p.messages)}</td><td class="num">${fmt(p.dmarcPass)}</td><td class="num">${pct(p.rate)}</td></tr>`,
  )}</tbody></table></details>
</section>
<div class="areas">
<section class="panel" aria-labelledby="dispositions"><h2 id="dispositions">Dispositions</h2>
${
  summary.dispositions.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<table><thead><tr><th scope="col">Disposition</th><th scope="col" class="num">Messages</th><th scope="col" class="num">Share</th></tr></thead>
<tbody>${summary.dispositions.map(
        (d) =>
          html`<tr><th scope="row">${d.disposition}</th><td class="num">${fmt(d.messages)}</td><td class="num">${share(d.messages)}</td></tr>`,
      )}</tbody></table>`
}</section>
<section class="panel" aria-labelledby="failing"><h2 id="failing">Top failing sources</h2>
${
  summary.top_failing_sources.length === 0
    ? html`<p class="muted">No failing sources.</p>`
    : html`<table><thead><tr><th scope="col">Source</th><th scope="col" class="num">Failing messages</th></tr></thead>
<tbody>${summary.top_failing_sources.map(
        (f) =>
          html`<tr><th scope="row"><code>${f.source_ip}</code>${f.ptr ? html` <span class="muted">${f.ptr}</span>` : ''}</th><td class="num">${fmt(f.failing)}</td></tr>`,
      )}</tbody></table>`
}</section>
</div>
<h2>Recent reports by domain</h2>
${input.domains.length === 0 ? html`<p class="panel">No domains yet. <a href="/domains">Add one</a>.</p>` : domainSections}
${input.moreDomains ? html`<p class="muted">Only the first ${input.domains.length} domains are shown.</p>` : ''}`
  return reportLayout({ title: 'Reports', viewer: input.viewer, tab: '/reports', body })
}
