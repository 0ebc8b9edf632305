import type { Period } from '../../domain/reports/period.ts'
import type { Summary } from '../../infrastructure/repositories/pg-report-reader.ts'
import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { layout, type Viewer } from './layout.ts'

// /reports: the account's last 30 days (the same figures as GET /api/v1/dmarc-reports/overview),
// a server-drawn SVG chart (bars: daily volume; line: DMARC pass rate) with the data as a table,
// and each domain's recent reports.

export interface DayPoint {
  day: string
  messages: number
  dmarcPass: number
  /** Percent, null on a day without messages. */
  rate: number | null
}

/** Every day of the period, a day without reports as zero messages. */
export function dailySeries(period: Period, daily: Summary['daily']): DayPoint[] {
  const byDay = new Map(daily.map((d) => [d.day, d]))
  const out: DayPoint[] = []
  const end = Date.parse(`${period.to}T00:00:00Z`)
  for (let at = Date.parse(`${period.from}T00:00:00Z`); at <= end; at += 86_400_000) {
    const day = new Date(at).toISOString().slice(0, 10)
    const found = byDay.get(day)
    const messages = found?.messages ?? 0
    const dmarcPass = found?.dmarc_pass ?? 0
    out.push({
      day,
      messages,
      dmarcPass,
      rate: messages === 0 ? null : Math.round((dmarcPass / messages) * 1000) / 10,
    })
  }
  return out
}

const fmt = (n: number) => n.toLocaleString('en-US')
const pct = (n: number | null) => (n === null ? '–' : `${n.toFixed(1)}%`)

/** Bars for the volume (left scale), a polyline for the pass rate (right scale, 0–100%). */
export function volumeChart(points: DayPoint[]): SafeHtml {
  const width = 720
  const height = 240
  const pad = { left: 48, right: 44, top: 12, bottom: 28 }
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const max = Math.max(1, ...points.map((p) => p.messages))
  const step = plotW / Math.max(1, points.length)
  const barW = Math.max(1, step * 0.7)
  const y = (messages: number) => pad.top + plotH - (messages / max) * plotH
  const yRate = (rate: number) => pad.top + plotH - (rate / 100) * plotH
  const x = (i: number) => pad.left + i * step + step / 2
  const r = (n: number) => Math.round(n * 10) / 10
  const bars = points.map(
    (p, i) =>
      html`<rect class="bar" x="${r(x(i) - barW / 2)}" y="${r(y(p.messages))}" width="${r(barW)}" height="${r(pad.top + plotH - y(p.messages))}"><title>${p.day}: ${fmt(p.messages)} messages, ${pct(p.rate)} pass</title></rect>`,
  )
  // The line breaks on days without messages (no rate to draw).
  const segments: string[][] = []
  let current: string[] = []
  points.forEach((p, i) => {
    if (p.rate === null) {
      if (current.length) segments.push(current)
      current = []
    } else current.push(`${r(x(i))},${r(yRate(p.rate))}`)
  })
  if (current.length) segments.push(current)
  const lines = segments.map((segment) =>
    segment.length === 1
      ? html`<circle class="rate-dot" cx="${segment[0]!.split(',')[0]!}" cy="${segment[0]!.split(',')[1]!}" r="3"/>`
      : html`<polyline class="rate" points="${segment.join(' ')}"/>`,
  )
  const ticks = [0, 0.5, 1].map((f) => {
    const ty = r(pad.top + plotH - f * plotH)
    return html`<line class="grid" x1="${pad.left}" x2="${width - pad.right}" y1="${ty}" y2="${ty}"/>
<text class="axis" x="${pad.left - 6}" y="${ty + 4}" text-anchor="end">${fmt(Math.round(max * f))}</text>
<text class="axis rate-axis" x="${width - pad.right + 6}" y="${ty + 4}">${f * 100}%</text>`
  })
  const first = points[0]?.day ?? ''
  const last = points.at(-1)?.day ?? ''
  return html`<figure class="chart">
<svg viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title chart-desc" preserveAspectRatio="xMidYMid meet">
<title id="chart-title">Daily messages and DMARC pass rate</title>
<desc id="chart-desc">Bars: messages per day from ${first} to ${last}, up to ${fmt(max)}. Line: the share passing DMARC. The same figures are in the table below.</desc>
${ticks}
${bars}
${lines}
<text class="axis" x="${pad.left}" y="${height - 8}">${first}</text>
<text class="axis" x="${width - pad.right}" y="${height - 8}" text-anchor="end">${last}</text>
</svg>
<figcaption><span class="key bar-key" aria-hidden="true"></span> messages per day <span class="key rate-key" aria-hidden="true"></span> DMARC pass rate</figcaption>
</figure>`
}

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
    : html`<table><thead><tr><th scope="col">Reporter</th><th scope="col">Period</th><th scope="col" class="num">Messages</th><th scope="col">Received</th></tr></thead>
<tbody>${d.reports.map(
        (report) => html`<tr><td>${String(report.reporter_org ?? '')}</td>
<td>${time(toIso(report.begin_at))} – ${time(toIso(report.end_at))}</td>
<td class="num">${fmt(Number(report.message_count ?? 0))}</td><td>${time(toIso(report.created_at))}</td></tr>`,
      )}</tbody></table>`
}</section>`,
  )
  const body = html`<h1>Reports</h1>
<p class="lead">DMARC aggregate reports of all your domains, ${period.from} to ${period.to} (UTC).</p>
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
  return layout({ title: 'Reports', viewer: input.viewer, current: '/reports', body })
}

function toIso(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  const parsed = new Date(String(value))
  return Number.isNaN(parsed.getTime()) ? null : parsed.toISOString()
}
