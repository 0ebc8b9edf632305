// From report figures to SPF sources: which term authorises a sending IP (its service's documented
// include when the catalog knows one, else the address itself), and which IPs of a domain look
// legitimate yet fail SPF alignment, grouped into one proposal per term.

import { type CatalogIndex, SHIPPED_CATALOG_INDEX } from '../sources/catalog.ts'
import { type Classification, classifySource, statusOf } from '../sources/classify.ts'
import { formatIp, parseIp, unmapIpv4 } from '../spf/ip.ts'
import type { SourceActivity } from './ports.ts'
import { type ManagedSource, sourceKey } from './sources.ts'

export interface ServiceRef {
  id: string
  name: string
}

export interface ChosenSource {
  source: ManagedSource
  service: ServiceRef | null
  classification: Classification
}

function classify(activity: SourceActivity, domain: string, index: CatalogIndex): Classification {
  // No spfIncludes evidence: these IPs are looked at because SPF did not authorise them.
  return classifySource(index, {
    ip: activity.ip,
    ptr: activity.ptr,
    spfIncludes: [],
    dkimDomains: activity.dkimDomains,
    headerFrom: domain,
  })
}

/** `ip4:192.0.2.7` or `ip6:2001:db8::7`: the one address, for a sender the catalog cannot name. */
export function addressSource(ip: string, label?: string): ManagedSource | null {
  const parsed = parseIp(ip.trim())
  if (parsed === null) return null
  const address = unmapIpv4(parsed)
  const kind = address.family === 4 ? 'ip4' : 'ip6'
  return { kind, network: formatIp(address), ...(label ? { label } : {}) }
}

/**
 * The term that authorises `activity.ip`: the service's first documented include when the catalog
 * names the service with at least medium confidence (an include authorises the provider's whole
 * platform, so a conflicting classification falls back to the address), else the address.
 */
export function chooseSource(
  activity: SourceActivity,
  domain: string,
  index: CatalogIndex = SHIPPED_CATALOG_INDEX,
): ChosenSource | null {
  const classification = classify(activity, domain, index)
  const known = classification.service
  const service = known === null ? null : { id: known.id, name: known.name }
  const include = known === null ? undefined : index.services.get(known.id)?.spfIncludes[0]
  if (known !== null && include !== undefined && classification.confidence !== 'low') {
    return {
      source: { kind: 'include', domain: include, label: known.name, serviceId: known.id },
      service,
      classification,
    }
  }
  const source = addressSource(activity.ip, known?.name ?? activity.ptr ?? undefined)
  return source === null ? null : { source, service, classification }
}

export interface SourceProposal {
  source: ManagedSource
  service: ServiceRef | null
  /** The sending IPs behind the proposal, most messages first. */
  ips: string[]
  messages: number
  /** Messages of those IPs that were not SPF-aligned. */
  spfFailing: number
  /** Messages of those IPs that passed DMARC (through DKIM, mostly). */
  dmarcPass: number
}

/**
 * Proposals from the recent figures of a domain's IPs: an IP counts when some of its mail failed
 * SPF alignment and it looks legitimate (`statusOf`: a catalog service with aligned passes, or the
 * user said so). Forwarders are never proposed (forwarding breaks SPF by design), nor IPs the user
 * marked unwanted. Sources already in `present` (canonical terms) are left out.
 */
export function proposeSources(
  activities: readonly SourceActivity[],
  domain: string,
  present: ReadonlySet<string>,
  index: CatalogIndex = SHIPPED_CATALOG_INDEX,
): SourceProposal[] {
  const byKey = new Map<string, SourceProposal & { weights: Map<string, number> }>()
  for (const activity of activities) {
    const failing = activity.messages - activity.spfAligned
    if (failing <= 0 || activity.override === 'unwanted' || activity.override === 'forwarder') continue
    const chosen = chooseSource(activity, domain, index)
    if (chosen === null) continue
    const rates = {
      messages: activity.messages,
      dmarcPass: activity.dmarcPass,
      hasPtr: activity.ptr !== null,
    }
    if (statusOf(chosen.classification, rates, activity.override) !== 'legitimate') continue
    const key = sourceKey(chosen.source)
    if (present.has(key)) continue
    const entry = byKey.get(key) ?? {
      source: chosen.source,
      service: chosen.service,
      ips: [],
      messages: 0,
      spfFailing: 0,
      dmarcPass: 0,
      weights: new Map<string, number>(),
    }
    entry.weights.set(activity.ip, activity.messages)
    entry.messages += activity.messages
    entry.spfFailing += failing
    entry.dmarcPass += activity.dmarcPass
    byKey.set(key, entry)
  }
  return [...byKey.values()]
    .map(({ weights, ...proposal }) => ({
      ...proposal,
      ips: [...weights.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([ip]) => ip),
    }))
    .sort((a, b) => b.spfFailing - a.spfFailing || (sourceKey(a.source) < sourceKey(b.source) ? -1 : 1))
}
