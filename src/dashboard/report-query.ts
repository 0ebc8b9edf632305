import { listDomains } from '../../domain/domains/use-cases.ts'
import { periodOf } from '../../domain/reports/period.ts'
import { DAY_CHOICES, type PeriodFilter } from './report-frame-views.ts'
import type { DashboardServices } from './services.ts'

// Reading the report pages' query strings: page number, period (the API's rules: `days`, or
// `from`/`to` over at most 366 days; dates win over `days`, which the form's select sends too) and
// the domain filter, always resolved within the account; and what a filtered list hands its view.

export type Query = Record<string, string | undefined>

/** How many domains the filter's select lists (the same bound as the alerts page). */
const DOMAINS_LISTED = 200

export function pageOf(q: Query): number {
  return /^[1-9]\d{0,5}$/.test(q.page ?? '') ? Number(q.page) : 1
}

/** A database id from the path; null for anything that is not one (the page answers 404). */
export function idOf(value: string | null | undefined): number | null {
  return typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value) ? Number(value) : null
}

/** The period asked for; an invalid one falls back to the last 30 days and says why. */
export function periodFilterOf(q: Query, now: Date): PeriodFilter {
  const from = (q.from ?? '').trim()
  const to = (q.to ?? '').trim()
  const days = /^\d{1,3}$/.test(q.days ?? '') ? Number(q.days) : undefined
  const custom = from !== '' || to !== ''
  const found = custom
    ? periodOf({ from: from === '' ? undefined : from, to: to === '' ? undefined : to }, now)
    : periodOf({ days }, now)
  if (found.ok) {
    const chosen = days ?? 30
    return {
      period: found.value,
      days: custom ? null : (DAY_CHOICES as readonly number[]).includes(chosen) ? chosen : null,
      error: null,
    }
  }
  const fallback = periodOf({}, now)
  if (!fallback.ok) throw new Error('the default period is always valid')
  const message = found.failure.code === 'validation_failed' ? found.failure.message : 'Invalid period.'
  return { period: fallback.value, days: 30, error: message }
}

/** The domain name in `?domain=`, normalised; '' when none was asked for. */
export function askedDomainOf(q: Query): string {
  return (q.domain ?? '').trim().toLowerCase().slice(0, 253)
}

export interface DomainChoice {
  /** The account's domain names for the select. */
  names: string[]
  /** The domain shown: the one asked for, else (when one is required) the first. */
  selected: string | null
  domainId: number | null
  /** A domain was asked for that is not in the account. */
  unknown: boolean
}

/**
 * The domain filter. `required`: the page shows one domain at a time (the TLS summary is read per
 * domain), so without a choice it shows the first; otherwise no choice means all domains.
 */
export async function domainChoiceOf(
  s: Pick<DashboardServices, 'domains' | 'reports'>,
  accountId: string,
  q: Query,
  required: boolean,
): Promise<DomainChoice> {
  const listed = await listDomains(s, accountId, {}, { page: 1, perPage: DOMAINS_LISTED })
  const names = listed.items.map((d) => d.name)
  const asked = askedDomainOf(q)
  const selected = asked !== '' ? asked : required ? (names[0] ?? null) : null
  if (selected === null) return { names, selected, domainId: null, unknown: false }
  const domainId = await s.reports.domainId(accountId, selected)
  return { names, selected, domainId, unknown: domainId === null }
}

/** What a report page filters by: the period, the page and the domain. */
export interface ReportFilter {
  period: PeriodFilter
  page: number
  choice: DomainChoice
}

/** The filter of a report page from its query string (see domainChoiceOf for `required`). */
export async function reportFilterOf(
  s: Pick<DashboardServices, 'domains' | 'reports' | 'now'>,
  accountId: string,
  q: Query,
  required: boolean,
): Promise<ReportFilter> {
  return {
    period: periodFilterOf(q, s.now()),
    page: pageOf(q),
    choice: await domainChoiceOf(s, accountId, q, required),
  }
}

/** A filtered list's view input: the filter as chosen, the page's rows and the number of pages. */
export function listedPage<T>(filter: ReportFilter, found: { items: T[]; total: number }, perPage: number) {
  return {
    domains: filter.choice.names,
    domain: filter.choice.selected,
    period: filter.period,
    reports: found.items,
    total: found.total,
    page: filter.page,
    lastPage: Math.max(1, Math.ceil(found.total / perPage)),
  }
}
