import { presentAggregateRecord, presentPolicyPublished } from '../routes/report-detail-models.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import type { Viewer } from './layout.ts'
import { fmt, pager, reportLayout, toIso } from './report-frame-views.ts'

// /reports/{id}: one aggregate report as GET /api/v1/domains/{name}/reports/{id} returns it:
// the reporter's metadata, the policy it saw published, and its records (largest count first).

type Row = Record<string, unknown>
type PresentedRecord = ReturnType<typeof presentAggregateRecord>

const POLICY_LABELS: [key: keyof ReturnType<typeof presentPolicyPublished>, label: string][] = [
  ['domain', 'Domain'],
  ['p', 'Policy (p)'],
  ['sp', 'Subdomain policy (sp)'],
  ['np', 'Non-existent subdomain policy (np)'],
  ['pct', 'Percentage (pct)'],
  ['adkim', 'DKIM alignment (adkim)'],
  ['aspf', 'SPF alignment (aspf)'],
  ['fo', 'Failure reporting (fo)'],
  ['testing', 'Testing (t)'],
  ['discovery_method', 'Discovery method'],
]

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value))
const none = html`<span class="muted">–</span>`

function result(value: unknown): SafeHtml {
  const v = text(value).toLowerCase()
  if (v === '') return html`<td>${none}</td>`
  return html`<td class="result ${v === 'pass' ? 'pass' : v === 'fail' ? 'fail' : ''}">${v}</td>`
}

function aligned(value: unknown): SafeHtml {
  return value === true ? badge('ok', 'aligned') : badge('error', 'not aligned')
}

function authResults(record: PresentedRecord): SafeHtml {
  const dkim = record.dkim.map(
    (d) =>
      html`<li>DKIM <code>${d.domain}</code>${d.selector ? html` s=<code>${d.selector}</code>` : ''}: ${d.result}</li>`,
  )
  const spf = record.spf.map(
    (s) => html`<li>SPF${s.scope ? html` (${s.scope})` : ''} <code>${s.domain}</code>: ${s.result}</li>`,
  )
  const reasons = record.reasons.map(
    (r) => html`<li>Override: ${r.type}${r.comment ? html` (${r.comment})` : ''}</li>`,
  )
  const items = [...dkim, ...spf, ...reasons]
  return items.length === 0 ? none : html`<ul class="plain">${items}</ul>`
}

export function reportDetailView(input: {
  viewer: Viewer
  domain: string
  report: Row
  records: Row[]
  total: number
  page: number
  lastPage: number
}): SafeHtml {
  const { report, domain } = input
  const policy = presentPolicyPublished(report.policy)
  const errors = Array.isArray(report.errors) ? report.errors.map(String) : []
  const policyRows = POLICY_LABELS.filter(([key]) => policy[key] !== null && policy[key] !== '')
  const records = input.records.map(presentAggregateRecord).map(
    (r) => html`<tr><th scope="row"><code>${text(r.source_ip)}</code></th>
<td class="num">${fmt(r.count)}</td>
<td>${text(r.disposition)}</td>
<td>${r.dmarc_pass === true ? badge('ok', 'pass') : badge('error', 'fail')}</td>
${result(r.dkim_evaluated)}<td>${aligned(r.dkim_aligned)}</td>
${result(r.spf_evaluated)}<td>${aligned(r.spf_aligned)}</td>
<td><code>${text(r.header_from)}</code>${r.envelope_from ? html`<br><span class="muted">envelope</span> <code>${text(r.envelope_from)}</code>` : ''}</td>
<td>${authResults(r)}</td></tr>`,
  )
  const title = `Report ${text(report.report_id)} from ${text(report.reporter_org)}`
  const body = html`<p><a href="/reports/list?${new URLSearchParams({ domain }).toString()}">← Aggregate reports of ${domain}</a></p>
<h1>Aggregate report from ${text(report.reporter_org)}</h1>
<section class="panel" aria-labelledby="metadata"><h2 id="metadata">Report</h2>
<dl class="record">
<dt>Domain</dt><dd><a href="/domains/${domain}">${domain}</a></dd>
<dt>Reporter</dt><dd>${text(report.reporter_org)}${report.reporter_email ? html` <span class="muted">${text(report.reporter_email)}</span>` : ''}</dd>
<dt>Report ID</dt><dd><code>${text(report.report_id)}</code></dd>
<dt>Period</dt><dd>${time(toIso(report.begin_at))} – ${time(toIso(report.end_at))}</dd>
<dt>Received</dt><dd>${time(toIso(report.received_at))}</dd>
<dt>Messages</dt><dd>${fmt(Number(report.message_count ?? 0))}</dd>
<dt>Records</dt><dd>${fmt(Number(report.record_count ?? 0))}</dd>
<dt>Received again</dt><dd>${fmt(Number(report.duplicates_seen ?? 0))} times</dd>
<dt>Format</dt><dd>${text(report.variant)}</dd>
${errors.length ? html`<dt>Reporter’s errors</dt><dd><ul class="plain">${errors.map((e) => html`<li>${e}</li>`)}</ul></dd>` : ''}
</dl></section>
<section class="panel" aria-labelledby="policy"><h2 id="policy">Published policy</h2>
${
  policyRows.length === 0
    ? html`<p class="muted">The report names no policy.</p>`
    : html`<p class="muted">The DMARC record the receiver found when it evaluated the mail.</p><dl class="record">${policyRows.map(
        ([key, label]) => html`<dt>${label}</dt><dd><code>${text(policy[key])}</code></dd>`,
      )}</dl>`
}</section>
<h2 id="records">Records <span class="muted">(${fmt(input.total)})</span></h2>
${
  input.records.length === 0
    ? html`<p class="panel">No records on this page.</p>`
    : html`<div class="table-scroll"><table class="records" aria-describedby="records">
<thead><tr><th scope="col">Source IP</th><th scope="col" class="num">Count</th><th scope="col">Disposition</th><th scope="col">DMARC</th><th scope="col">DKIM result</th><th scope="col">DKIM alignment</th><th scope="col">SPF result</th><th scope="col">SPF alignment</th><th scope="col">From</th><th scope="col">Authentication results</th></tr></thead>
<tbody>${records}</tbody></table></div>`
}
${pager(`/reports/${text(report.id)}`, new URLSearchParams({ domain }), input.page, input.lastPage)}`
  return reportLayout({ title, viewer: input.viewer, tab: '/reports/list', body })
}
