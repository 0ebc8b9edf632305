import type { Summary } from '../../domain/reports/aggregate-reads.ts'
import type { Period } from '../../domain/reports/period.ts'
import { formatCount } from '../../domain/sources/figures.ts'
import type { SourceView } from '../../domain/sources/list-sources.ts'
import type { Recommendation } from '../../domain/sources/recommendation.ts'
import { dailySeries, volumeChart } from './chart-views.ts'
import { html, type SafeHtml } from './html.ts'
import { latestReportJump } from './report-frame-views.ts'
import { sourcesTable } from './source-views.ts'

// The report side of a domain's page: the last 30 days as a chart with the same figures as a
// table, and its heaviest sources with their recommendations.

const pct = (n: number | null) => (n === null ? '–' : `${n.toFixed(1)}%`)

export interface DomainReportData {
  period: Period
  summary: Summary
  /** When the period holds no report: where the domain's latest report begins (null: none). */
  latest?: Date | null
  sources: {
    items: readonly SourceView[]
    total: number
    volume: number
    recommendations: readonly Recommendation[]
  }
}

function dailySection(domain: string, period: Period, summary: Summary, latest: Date | null): SafeHtml {
  const points = dailySeries(period, summary.daily)
  const total = summary.totals.messages
  return html`<section class="panel" aria-labelledby="daily"><h2 id="daily">Mail in the last 30 days</h2>
<p class="muted">From ${period.from} to ${period.to} (UTC), from the DMARC aggregate reports receivers sent for ${domain}.</p>
<dl class="record">
<dt>Messages</dt><dd>${formatCount(total)}</dd>
<dt>DMARC pass rate</dt><dd>${pct(summary.rates.dmarc_pass)}</dd>
<dt>DKIM aligned</dt><dd>${pct(summary.rates.dkim_aligned)}</dd>
<dt>SPF aligned</dt><dd>${pct(summary.rates.spf_aligned)}</dd>
</dl>
${
  total === 0 && latest !== null && summary.totals.reports === 0
    ? html`<p class="muted">No reports in this period.</p>
${latestReportJump(latest, (jump) => `/reports/list?${new URLSearchParams({ domain, from: jump.from, to: jump.to }).toString()}`, domain)}`
    : total === 0
      ? html`<p class="muted">No messages reported in this period. Reports arrive once your DMARC record names a rua= address.</p>`
      : html`${volumeChart(points)}
<details><summary>The figures as a table</summary>
<table><caption class="skip">Messages and DMARC pass rate per day</caption>
<thead><tr><th scope="col">Day</th><th scope="col" class="num">Messages</th><th scope="col" class="num">DMARC pass</th><th scope="col" class="num">Pass rate</th></tr></thead>
<tbody>${points.map(
          (p) =>
            html`<tr><th scope="row">${p.day}</th><td class="num">${formatCount(p.messages)}</td><td class="num">${formatCount(p.dmarcPass)}</td><td class="num">${pct(p.rate)}</td></tr>`,
        )}</tbody></table></details>`
}
</section>`
}

function sourcesSection(domain: string, sources: DomainReportData['sources']): SafeHtml {
  const more = sources.total - sources.items.length
  return html`<section class="panel" aria-labelledby="top-sources"><h2 id="top-sources">Top sources</h2>
${
  sources.items.length === 0
    ? html`<p class="muted">No sources yet: they are listed once reports for ${domain} arrive.</p>`
    : sourcesTable({
        sources: sources.items,
        volume: sources.volume,
        recommendations: sources.recommendations,
        caption: `The heaviest sources of ${domain}`,
      })
}
<p><a href="/domains/${domain}/sources">All ${formatCount(sources.total)} ${sources.total === 1 ? 'source' : 'sources'} and ${formatCount(sources.recommendations.length)} ${sources.recommendations.length === 1 ? 'recommendation' : 'recommendations'}</a>${more > 0 ? html` <span class="muted">(${formatCount(more)} more not shown here)</span>` : ''}</p>
</section>`
}

/** The chart and the top sources, placed on the domain page below its posture. */
export function domainReportSections(domain: string, data: DomainReportData): SafeHtml {
  return html`${dailySection(domain, data.period, data.summary, data.latest ?? null)}
${sourcesSection(domain, data.sources)}`
}
