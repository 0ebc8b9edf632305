import type { Summary } from '../../domain/reports/aggregate-reads.ts'
import type { Period } from '../../domain/reports/period.ts'
import { ASSETS } from './assets.ts'
import { html, raw, type SafeHtml } from './html.ts'

// The dashboard's daily chart (bars: a count per day; line: a pass rate on a 0–100 % scale).
// The server draws it as SVG, so it works without JavaScript; the page also carries the series
// as JSON data (<script type="application/json">: data, never run, so CSP script-src 'self'
// allows it) and uPlot, which app.js uses to swap the SVG for an interactive chart with a live
// legend and tooltip. Pages show the same figures as a table beside it.

export interface DayPoint {
  day: string
  messages: number
  dmarcPass: number
  /** Percent, null on a day without messages. */
  rate: number | null
}

export interface ChartOptions {
  /** Prefix of the chart's element ids; give each chart on a page its own. Default `chart`. */
  id?: string
  title?: string
  /** What the bars count, in the plural (`messages`, `sessions`). */
  noun?: string
  /** Legend label of the bars. */
  countLabel?: string
  /** Legend label of the line. */
  rateLabel?: string
}

const DEFAULTS: Required<ChartOptions> = {
  id: 'chart',
  title: 'Daily messages and DMARC pass rate',
  noun: 'messages',
  countLabel: 'Messages per day',
  rateLabel: 'DMARC pass rate',
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

/** The chart: SVG for everyone, the same series as JSON for app.js, and uPlot's files. */
export function volumeChart(points: DayPoint[], options: ChartOptions = {}): SafeHtml {
  const o = { ...DEFAULTS, ...options }
  return html`<figure class="chart" data-chart="${o.id}">
${svgChart(points, o)}
<figcaption><span class="key bar-key" aria-hidden="true"></span> ${o.noun} per day <span class="key rate-key" aria-hidden="true"></span> ${o.rateLabel}</figcaption>
<div class="chart-live" id="${o.id}-live" role="img" aria-label="${o.title} (interactive)" hidden></div>
</figure>
${chartData(points, o)}
<link rel="stylesheet" href="${ASSETS.uplotCss.path}">
<script src="${ASSETS.uplotJs.path}" defer></script>`
}

/** The series for app.js. JSON inside <script> is raw text: `<` is escaped so it cannot end it. */
function chartData(points: DayPoint[], o: Required<ChartOptions>): SafeHtml {
  const count = points.reduce((s, p) => s + p.messages, 0)
  const pass = points.reduce((s, p) => s + p.dmarcPass, 0)
  const data = {
    title: o.title,
    noun: o.noun,
    countLabel: o.countLabel,
    rateLabel: o.rateLabel,
    days: points.map((p) => p.day),
    counts: points.map((p) => p.messages),
    rates: points.map((p) => p.rate),
    total: count,
    // Two decimals, as the report reader rounds its rates: the legend then matches the page's totals.
    rate: count === 0 ? null : Math.round((pass / count) * 10000) / 100,
  }
  const json = JSON.stringify(data).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')
  return html`<script type="application/json" id="${o.id}-data">${raw(json)}</script>`
}

/** Bars for the count (left scale), a polyline for the rate (right scale, 0–100%). */
function svgChart(points: DayPoint[], o: Required<ChartOptions>): SafeHtml {
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
      html`<rect class="bar" x="${r(x(i) - barW / 2)}" y="${r(y(p.messages))}" width="${r(barW)}" height="${r(pad.top + plotH - y(p.messages))}"><title>${p.day}: ${fmt(p.messages)} ${o.noun}, ${pct(p.rate)} ${o.rateLabel}</title></rect>`,
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
  return html`<svg viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${o.id}-title ${o.id}-desc" preserveAspectRatio="xMidYMid meet">
<title id="${o.id}-title">${o.title}</title>
<desc id="${o.id}-desc">Bars: ${o.noun} per day from ${first} to ${last}, up to ${fmt(max)}. Line: ${o.rateLabel}. The same figures are in the table below.</desc>
${ticks}
${bars}
${lines}
<text class="axis" x="${pad.left}" y="${height - 8}">${first}</text>
<text class="axis" x="${width - pad.right}" y="${height - 8}" text-anchor="end">${last}</text>
</svg>`
}

const fmt = (n: number) => n.toLocaleString('en-US')
const pct = (n: number | null) => (n === null ? '–' : `${n.toFixed(1)}%`)
