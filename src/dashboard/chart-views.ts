import type { Period } from '../../domain/reports/period.ts'
import type { Summary } from '../../infrastructure/repositories/pg-report-reader.ts'
import { html, type SafeHtml } from './html.ts'

// The dashboard's daily chart (bars: messages per day; line: DMARC pass rate), drawn on the server
// as SVG so that it works without JavaScript; pages show the same figures as a table beside it.

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

const fmt = (n: number) => n.toLocaleString('en-US')
const pct = (n: number | null) => (n === null ? '–' : `${n.toFixed(1)}%`)
