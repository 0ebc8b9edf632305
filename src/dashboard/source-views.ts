import type { Period } from '../../domain/reports/period.ts'
import { DEFAULT_PER_PAGE } from '../../domain/shared/pagination.ts'
import { formatCount, formatPercent } from '../../domain/sources/figures.ts'
import type { SourceView } from '../../domain/sources/list-sources.ts'
import type { Recommendation } from '../../domain/sources/recommendation.ts'
import { badge, domainTabs } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { layout, type Viewer } from './layout.ts'

// The sending sources of a domain (the figures of GET /api/v1/domains/{name}/sources) with the
// recommendations of GET …/sources/intelligence beside the sources they concern: a few on the
// domain page, all of them (paginated) on /domains/{name}/sources.

const STATUS_BADGES: Record<string, string> = {
  legitimate: 'ok',
  unknown: 'unknown',
  suspicious: 'error',
  forwarder: 'info',
}

export const SOURCE_STATUSES = ['legitimate', 'unknown', 'suspicious', 'forwarder'] as const

/** The IPs a recommendation's evidence lists (`evidence.sources[].ip`), when it lists any. */
function evidenceIps(recommendation: Recommendation): string[] {
  const sources = recommendation.evidence.sources
  if (!Array.isArray(sources)) return []
  return sources.flatMap((s) =>
    typeof s === 'object' && s !== null && typeof (s as { ip?: unknown }).ip === 'string'
      ? [(s as { ip: string }).ip]
      : [],
  )
}

/** The recommendations about a source: its service's, or those whose evidence names its IP. */
export function recommendationsFor(view: SourceView, all: readonly Recommendation[]): Recommendation[] {
  const service = view.classification.service?.id
  return all.filter(
    (r) => (service !== undefined && r.change.service === service) || evidenceIps(r).includes(view.stats.ip),
  )
}

const rate = (part: number, whole: number) => formatPercent(part, whole)

function sourceRow(view: SourceView, volume: number, recommendations: readonly Recommendation[]): SafeHtml {
  const { stats, classification } = view
  const service = classification.service
  const mine = recommendationsFor(view, recommendations)
  return html`<tr>
<th scope="row"><code>${stats.ip}</code>${stats.ptr ? html`<br><span class="muted">${stats.ptr}</span>` : ''}</th>
<td>${service ? html`${service.name} <span class="muted">(${classification.confidence})</span>` : html`<span class="muted">Unidentified</span>`}</td>
<td>${badge(STATUS_BADGES[view.status] ?? 'unknown', view.status)}${view.override ? html` <span class="muted">marked ${view.override.status}</span>` : ''}</td>
<td class="num">${formatCount(stats.messages)} <span class="muted">(${rate(stats.messages, volume)})</span></td>
<td class="num">${rate(stats.dmarcPass, stats.messages)}</td>
<td class="num">${rate(stats.spfAligned, stats.messages)}</td>
<td class="num">${rate(stats.dkimAligned, stats.messages)}</td>
<td>${mine.length === 0 ? html`<span class="muted">None</span>` : html`<ul class="recommendations">${mine.map((r) => html`<li>${badge(r.priority)} ${r.title}</li>`)}</ul>`}</td>
</tr>`
}

/** The sources table: heaviest first, figures over the period, recommendations per row. */
export function sourcesTable(input: {
  sources: readonly SourceView[]
  volume: number
  recommendations: readonly Recommendation[]
  caption: string
}): SafeHtml {
  return html`<table class="sources">
<caption class="skip">${input.caption}</caption>
<thead><tr><th scope="col">Source</th><th scope="col">Service</th><th scope="col">Status</th><th scope="col" class="num">Messages</th><th scope="col" class="num">DMARC pass</th><th scope="col" class="num">SPF aligned</th><th scope="col" class="num">DKIM aligned</th><th scope="col">Recommendation</th></tr></thead>
<tbody>${input.sources.map((view) => sourceRow(view, input.volume, input.recommendations))}</tbody></table>`
}

/** Every recommendation with what to change: the record and the value, the provider's docs. */
export function recommendationList(recommendations: readonly Recommendation[]): SafeHtml {
  if (recommendations.length === 0) {
    return html`<p class="panel">No recommendations: every source is set up or accounted for.</p>`
  }
  return html`<ol class="issues">${recommendations.map(
    (r) => html`<li class="issue ${r.priority}">
<p>${badge(r.priority)} <strong>${r.title}</strong></p>
<p>${r.effect.description}</p>
${
  r.change.record && r.change.value
    ? html`<dl class="record"><dt>Record</dt><dd><code>${r.change.record}</code></dd><dt>Change</dt><dd><code class="value">${r.change.value}</code></dd></dl>`
    : ''
}
${r.change.docs ? html`<p><a href="${r.change.docs}" rel="noopener noreferrer">The provider’s setup guide</a></p>` : ''}
</li>`,
  )}</ol>`
}

export interface SourcesPageInput {
  viewer: Viewer
  domain: string
  period: Period
  sources: readonly SourceView[]
  /** Sources matching the filter over all pages. */
  total: number
  volume: number
  recommendations: readonly Recommendation[]
  status: string | null
  page: number
  perPage: number
  lastPage: number
}

function pager(input: SourcesPageInput): SafeHtml {
  if (input.lastPage <= 1) return html``
  const link = (page: number) =>
    `/domains/${encodeURIComponent(input.domain)}/sources?${new URLSearchParams({
      ...(input.status ? { status: input.status } : {}),
      ...(input.perPage === DEFAULT_PER_PAGE ? {} : { per_page: String(input.perPage) }),
      page: String(page),
    })}`
  return html`<nav aria-label="Pages" class="actions">${input.page > 1 ? html`<a href="${link(input.page - 1)}">Previous</a>` : ''}<span>Page ${input.page} of ${input.lastPage}</span>${input.page < input.lastPage ? html`<a href="${link(input.page + 1)}">Next</a>` : ''}</nav>`
}

export function sourcesPageView(input: SourcesPageInput): SafeHtml {
  const { domain, period } = input
  const filter = html`<form method="get" action="/domains/${domain}/sources" class="inline panel">
<div><label for="status">Status</label>
<select id="status" name="status"><option value="">All statuses</option>${SOURCE_STATUSES.map(
    (s) => html`<option value="${s}"${input.status === s ? html` selected` : ''}>${s}</option>`,
  )}</select></div>
<div><button type="submit" class="secondary">Filter</button></div>
</form>`
  const body = html`<p><a href="/domains/${domain}">← ${domain}</a></p>
<h1>Sources of ${domain}</h1>
${domainTabs(domain, 'sources')}
<p class="lead">Every IP address that sent mail as ${domain} from ${period.from} to ${period.to} (UTC), heaviest first, with the service it belongs to and what to change.</p>
${filter}
<h2>${formatCount(input.total)} ${input.total === 1 ? 'source' : 'sources'}</h2>
${
  input.sources.length === 0
    ? html`<p class="panel">No sources ${input.status ? `with status ${input.status} ` : ''}in this period. Sources appear once receivers send DMARC aggregate reports for ${domain}.</p>`
    : sourcesTable({
        sources: input.sources,
        volume: input.volume,
        recommendations: input.recommendations,
        caption: `Sources of ${domain}`,
      })
}
${pager(input)}
<h2>Recommendations</h2>
${recommendationList(input.recommendations)}`
  return layout({ title: `Sources of ${domain}`, viewer: input.viewer, current: '/domains', body })
}
