// The sources of a domain (issue #5, `GET /domains/{domain}/sources`): every IP that sent as the
// domain in a period, classified against the catalog, with the owner's verdict applied and a
// status, filtered, sorted and paged; plus the volume per sending service.

import type { Period } from '../reports/period.ts'
import { offsetOf, type PageRequest } from '../shared/pagination.ts'
import type { ResolvedNode } from '../spf/include-tree.ts'
import { type CatalogIndex, type ServiceCategory, SHIPPED_CATALOG_INDEX } from './catalog.ts'
import {
  type Classification,
  classifySource,
  type SourceOverride,
  type SourceStatus,
  statusOf,
} from './classify.ts'
import type { SourceStats } from './source-stats.ts'
import { spfIncludeEvidence } from './spf-evidence.ts'

export interface OverrideEntry {
  ip: string
  status: SourceOverride
  note: string | null
  updatedAt: Date
}

export interface SourceView {
  stats: SourceStats
  classification: Classification
  status: SourceStatus
  override: OverrideEntry | null
}

export interface SourceDeps {
  /** The per-IP figures of the domain over a period (tenant-scoped by the caller). */
  stats: (period: Period) => Promise<SourceStats[]>
  overrides: () => Promise<OverrideEntry[]>
  /** The domain's published SPF record with everything it includes; null when unknown. */
  spfTree: (domain: string) => Promise<ResolvedNode | null>
  catalog?: CatalogIndex
}

export interface SourceFilter {
  status?: SourceStatus
  /** A catalog service id. */
  service?: string
  /** An IP prefix, or part of the PTR name or of the service's id or name (case-insensitive). */
  q?: string
}

export interface ServiceGroup {
  /** null for the sources no catalog service matched. */
  id: string | null
  name: string
  category: ServiceCategory | null
  messages: number
  dmarcPass: number
  sources: number
  /** messages over the domain's volume (0..1). */
  share: number
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Heaviest first, then by IP (code-unit order): pages stay stable. */
const bySize = (a: SourceView, b: SourceView) =>
  b.stats.messages - a.stats.messages || compareText(a.stats.ip, b.stats.ip)

/**
 * Classifies figures already read. The PTR is never forward-confirmed here: the enrichment job
 * stores the reverse name only, without resolving it back, so a PTR counts as unconfirmed evidence.
 * The header From is the policy domain (the rollups do not keep per-message From domains).
 */
export function classifyStats(
  input: {
    domain: string
    stats: readonly SourceStats[]
    overrides: readonly OverrideEntry[]
    spfTree: ResolvedNode | null
  },
  catalog: CatalogIndex = SHIPPED_CATALOG_INDEX,
): SourceView[] {
  const includesFor = spfIncludeEvidence(input.spfTree)
  const overrides = new Map(input.overrides.map((o) => [o.ip, o]))
  return input.stats
    .map((stats): SourceView => {
      const classification = classifySource(catalog, {
        ip: stats.ip,
        ptr: stats.ptr,
        ptrConfirmed: false,
        spfIncludes: includesFor(stats.ip),
        dkimDomains: stats.dkimDomains,
        headerFrom: input.domain,
      })
      const override = overrides.get(stats.ip) ?? null
      const rates = { messages: stats.messages, dmarcPass: stats.dmarcPass, hasPtr: stats.ptr !== null }
      return {
        stats,
        classification,
        status: statusOf(classification, rates, override?.status ?? null),
        override,
      }
    })
    .sort(bySize)
}

/** Every source of the period, classified, heaviest first. */
export async function classifySources(
  deps: SourceDeps,
  input: { domain: string; period: Period },
): Promise<SourceView[]> {
  const [stats, overrides, spfTree] = await Promise.all([
    deps.stats(input.period),
    deps.overrides(),
    deps.spfTree(input.domain),
  ])
  return classifyStats({ domain: input.domain, stats, overrides, spfTree }, deps.catalog)
}

function matches(view: SourceView, filter: SourceFilter): boolean {
  if (filter.status !== undefined && view.status !== filter.status) return false
  const service = view.classification.service
  if (filter.service !== undefined && service?.id !== filter.service.trim().toLowerCase()) return false
  const q = filter.q?.trim().toLowerCase() ?? ''
  if (q === '') return true
  return (
    view.stats.ip.startsWith(q) ||
    (view.stats.ptr?.toLowerCase().includes(q) ?? false) ||
    (service !== null && (service.id.includes(q) || service.name.toLowerCase().includes(q)))
  )
}

/** Volume per sending service over all the sources (not only a filtered page), heaviest first. */
export function serviceGroups(views: readonly SourceView[]): ServiceGroup[] {
  const volume = views.reduce((sum, v) => sum + v.stats.messages, 0)
  const groups = new Map<string, ServiceGroup>()
  for (const { stats, classification } of views) {
    const service = classification.service
    const key = service?.id ?? ''
    let group = groups.get(key)
    if (group === undefined) {
      group = {
        id: service?.id ?? null,
        name: service?.name ?? 'Unidentified',
        category: service?.category ?? null,
        messages: 0,
        dmarcPass: 0,
        sources: 0,
        share: 0,
      }
      groups.set(key, group)
    }
    group.messages += stats.messages
    group.dmarcPass += stats.dmarcPass
    group.sources += 1
  }
  for (const group of groups.values()) group.share = volume > 0 ? group.messages / volume : 0
  return [...groups.values()].sort(
    (a, b) => b.messages - a.messages || compareText(a.id ?? '\uffff', b.id ?? '\uffff'),
  )
}

export interface SourceList {
  items: SourceView[]
  /** Sources matching the filter, over all pages. */
  total: number
  /** All messages of the period (the denominator of every share). */
  volume: number
  services: ServiceGroup[]
}

export async function listSources(
  deps: SourceDeps,
  input: { domain: string; period: Period; filter: SourceFilter; page: PageRequest },
): Promise<SourceList> {
  const all = await classifySources(deps, input)
  const matching = all.filter((view) => matches(view, input.filter))
  const start = offsetOf(input.page)
  return {
    items: matching.slice(start, start + input.page.perPage),
    total: matching.length,
    volume: all.reduce((sum, v) => sum + v.stats.messages, 0),
    services: serviceGroups(all),
  }
}
