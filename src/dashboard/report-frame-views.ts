import type { Period } from '../../domain/reports/period.ts'
import { html, type SafeHtml } from './html.ts'
import { layout, type Viewer } from './layout.ts'

// What the report pages share: the sub-navigation between them, the domain and period filter,
// the pager and the number formats.

const TABS = [
  { href: '/reports', label: 'Overview' },
  { href: '/reports/list', label: 'Aggregate reports' },
  { href: '/reports/failures', label: 'Failure reports' },
  { href: '/reports/tls', label: 'TLS reports' },
  { href: '/reports/quarantine', label: 'Quarantine' },
  { href: '/reports/upload', label: 'Upload reports' },
] as const

export type ReportTab = (typeof TABS)[number]['href']

export const fmt = (n: number) => n.toLocaleString('en-US')
export const pct = (n: number | null) => (n === null ? '–' : `${n.toFixed(1)}%`)

/** A timestamp column (Date, ISO text or the driver's string) as ISO text; null when absent. */
export function toIso(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  const parsed = new Date(String(value))
  return Number.isNaN(parsed.getTime()) ? null : parsed.toISOString()
}

/** A report page: the main layout with Reports marked current and the report sub-navigation. */
export function reportLayout(input: { title: string; viewer: Viewer; tab: ReportTab; body: SafeHtml }) {
  const nav = html`<nav class="sub" aria-label="Reports"><ul>${TABS.map(
    (tab) =>
      html`<li><a href="${tab.href}"${tab.href === input.tab ? html` aria-current="page"` : ''}>${tab.label}</a></li>`,
  )}</ul></nav>`
  return layout({
    title: input.title,
    viewer: input.viewer,
    current: '/reports',
    body: html`${nav}${input.body}`,
  })
}

export interface PeriodFilter {
  period: Period
  /** The `days` choice when the period is not from/to. */
  days: number | null
  /** Why the period asked for was refused (the default was used instead). */
  error: string | null
}

export const DAY_CHOICES = [7, 30, 90] as const

/** GET form: a domain (when the page filters by one) and the period. */
export function filterForm(input: {
  action: string
  label: string
  domains?: { names: string[]; selected: string | null; any?: boolean }
  period: PeriodFilter
}): SafeHtml {
  const { period, domains } = input
  const custom = period.days === null
  const selected = (on: boolean) => (on ? html` selected` : '')
  return html`<form method="get" action="${input.action}" class="inline panel" aria-label="${input.label}">
${
  domains
    ? html`<div><label for="domain">Domain</label>
<select id="domain" name="domain">${domains.any ? html`<option value=""${selected(domains.selected === null)}>All domains</option>` : ''}${domains.names.map(
        (name) => html`<option value="${name}"${selected(domains.selected === name)}>${name}</option>`,
      )}</select></div>`
    : ''
}
<div><label for="days">Period</label>
<select id="days" name="days" data-period>${
    // A from/to period shows as itself, not as the first "last N days" (issue #17).
    custom ? html`<option value="custom" selected>${period.period.from} to ${period.period.to}</option>` : ''
  }${DAY_CHOICES.map(
    (days) => html`<option value="${days}"${selected(period.days === days)}>last ${days} days</option>`,
  )}</select></div>
<div><label for="from">From <span class="hint">(optional, UTC)</span></label>
<input id="from" name="from" type="date" value="${custom ? period.period.from : ''}"></div>
<div><label for="to">To</label>
<input id="to" name="to" type="date" value="${custom ? period.period.to : ''}"></div>
<div><button type="submit" class="secondary">Show</button></div>
</form>
${period.error ? html`<div class="error-summary" role="alert"><p>${period.error} Showing the last 30 days instead.</p></div>` : ''}`
}

/** How many days a jump to the latest report shows: the default period's length. */
const JUMP_DAYS = 30

/**
 * For a period without reports: where the latest report begins and a link to the 30 days that end
 * on that day (records count on the day their report begins, docs/ingestion.md), so its figures
 * are in the period. Nothing when there is no report at all.
 */
export function latestReportJump(
  latest: Date | null,
  href: (period: Period) => string,
  scope: string,
): SafeHtml {
  if (latest === null) return html``
  const day = latest.toISOString().slice(0, 10)
  const from = new Date(Date.parse(`${day}T00:00:00Z`) - (JUMP_DAYS - 1) * 86_400_000)
    .toISOString()
    .slice(0, 10)
  return html`<p class="panel" data-latest-report>The latest report of ${scope} begins on <time datetime="${latest.toISOString()}">${day}</time>.
<a href="${href({ from, to: day })}">Show ${from} to ${day}</a></p>`
}

/** Previous / next links that keep the page's other query parameters. */
export function pager(path: string, params: URLSearchParams, page: number, lastPage: number): SafeHtml {
  if (lastPage <= 1) return html``
  const at = (n: number) => {
    const next = new URLSearchParams(params)
    if (n > 1) next.set('page', String(n))
    else next.delete('page')
    const query = next.toString()
    return query === '' ? path : `${path}?${query}`
  }
  return html`<nav aria-label="Pages" class="actions">${page > 1 ? html`<a href="${at(page - 1)}" rel="prev">Previous</a>` : ''}<span>Page ${page} of ${lastPage}</span>${page < lastPage ? html`<a href="${at(page + 1)}" rel="next">Next</a>` : ''}</nav>`
}

/** The query string that keeps a period filter (for pager and detail links). */
export function periodParams(filter: PeriodFilter): URLSearchParams {
  if (filter.days !== null) return new URLSearchParams({ days: String(filter.days) })
  return new URLSearchParams({ from: filter.period.from, to: filter.period.to })
}
