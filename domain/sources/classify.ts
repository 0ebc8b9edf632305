// Which sending service a source IP of a DMARC aggregate report belongs to, and what that means
// for the domain owner. Pure: the caller resolves the PTR (and whether it forward-confirms), works
// out which includes of the domain's SPF record authorised the IP, and collects the DKIM d= domains
// that passed for it.
//
// Rules (docs/sources.md has the same in prose):
//  1. Each kind of evidence votes for the catalog service it matches: `network` (the IP lies in a
//     documented range), `ptr` (the PTR name ends in a provider's suffix, on a label boundary),
//     `spf_include` (an include that authorised the IP is a provider's, exactly, RFC 7208 §5.2),
//     `dkim_domain` (a passing signature's d= is, or is under, a provider's domain, RFC 6376 §3.5).
//     A d= equal to or under the header From's organizational domain is the domain owner's own
//     signature (RFC 7489 §3.1.1 alignment), not evidence of a third party, and is ignored.
//  2. A service's support is the set of kinds voting for it; a service that runs on another's
//     infrastructure (`runs_on`, e.g. Google Groups on Google) also counts that service's kinds,
//     provided it has a vote of its own.
//  3. The winner has the most kinds; ties go to the stronger evidence (network > ptr >
//     spf_include > dkim_domain, compared strongest first), then to the smaller id.
//  4. Confidence: any vote for a service other than the winner (or the one it runs on) is a
//     conflict → low. Otherwise high when the support includes a network, a forward-confirmed PTR,
//     or two kinds; medium for a single kind (unconfirmed PTR, SPF include or DKIM domain alone).
//     No evidence at all → no service, low.

import { getDomain } from 'tldts'
import {
  type CatalogIndex,
  type CatalogMatch,
  matchDkimDomain,
  matchNetwork,
  matchPtr,
  matchSpfInclude,
  normalizeName,
  type SendingService,
  type ServiceCategory,
} from './catalog.ts'

export type EvidenceKind = 'network' | 'ptr' | 'spf_include' | 'dkim_domain'

/** Strongest first: a range is published by the provider, a PTR is set by the IP's owner, an include
 * only says the domain owner trusts the provider, and a DKIM d= says who signed, not who relayed. */
export const EVIDENCE_STRENGTH: readonly EvidenceKind[] = ['network', 'ptr', 'spf_include', 'dkim_domain']

export interface SourceEvidence {
  ip: string
  ptr: string | null
  /** The PTR name resolves back to `ip` (forward-confirmed reverse DNS). */
  ptrConfirmed?: boolean
  /** Includes of the domain's SPF record whose evaluation authorised this IP. */
  spfIncludes: readonly string[]
  /** DKIM d= domains reported with a pass for this IP. */
  dkimDomains: readonly string[]
  /** The header From domain of the reported messages. */
  headerFrom: string
}

export interface EvidenceItem {
  kind: EvidenceKind
  /** The PTR name, include or d= domain as seen (lower-cased), or the catalog CIDR holding the IP. */
  value: string
  /** The id of the service it points to. */
  service: string
}

export type Confidence = 'high' | 'medium' | 'low'

export interface ClassifiedService {
  id: string
  name: string
  category: ServiceCategory
  docs: string
  forwarder: boolean
}

export interface Classification {
  service: ClassifiedService | null
  confidence: Confidence
  /** Every matching piece of evidence, including votes for losing services; sorted. */
  evidence: EvidenceItem[]
}

const strength = (kind: EvidenceKind) => EVIDENCE_STRENGTH.indexOf(kind)

function compareEvidence(a: EvidenceItem, b: EvidenceItem): number {
  return (
    strength(a.kind) - strength(b.kind) || compareText(a.value, b.value) || compareText(a.service, b.service)
  )
}

// Code-unit order, not locale order: the same input must give the same output on every host.
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The organizational domain of the header From (RFC 7489 §3.2, Public Suffix List). */
function organizationalDomain(headerFrom: string): string | null {
  const name = normalizeName(headerFrom)
  if (name === '') return null
  return getDomain(name, { allowPrivateDomains: true }) ?? name
}

const within = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`)

function collectEvidence(index: CatalogIndex, input: SourceEvidence): EvidenceItem[] {
  const found = new Map<string, EvidenceItem>()
  const add = (kind: EvidenceKind, value: string, match: CatalogMatch | null) => {
    if (match === null) return
    const item = { kind, value, service: match.service.id }
    found.set(`${kind} ${value} ${item.service}`, item)
  }
  const network = matchNetwork(index, input.ip)
  if (network !== null) add('network', network.entry, network)
  if (input.ptr !== null && normalizeName(input.ptr) !== '') {
    add('ptr', normalizeName(input.ptr), matchPtr(index, input.ptr))
  }
  for (const include of input.spfIncludes) {
    add('spf_include', normalizeName(include), matchSpfInclude(index, include))
  }
  const org = organizationalDomain(input.headerFrom)
  for (const raw of input.dkimDomains) {
    const domain = normalizeName(raw)
    if (domain === '' || (org !== null && within(domain, org))) continue
    add('dkim_domain', domain, matchDkimDomain(index, domain))
  }
  return [...found.values()].sort(compareEvidence)
}

interface Candidate {
  service: SendingService
  kinds: ReadonlySet<EvidenceKind>
}

/** More kinds first; then whoever holds the strongest kind the other lacks; then the smaller id. */
function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.kinds.size !== b.kinds.size) return b.kinds.size - a.kinds.size
  for (const kind of EVIDENCE_STRENGTH) {
    if (a.kinds.has(kind) !== b.kinds.has(kind)) return a.kinds.has(kind) ? -1 : 1
  }
  return compareText(a.service.id, b.service.id)
}

const summary = (service: SendingService): ClassifiedService => ({
  id: service.id,
  name: service.name,
  category: service.category,
  docs: service.docs,
  forwarder: service.forwarder,
})

export function classifySource(index: CatalogIndex, input: SourceEvidence): Classification {
  const evidence = collectEvidence(index, input)
  const own = new Map<string, Set<EvidenceKind>>()
  for (const item of evidence) {
    const kinds = own.get(item.service) ?? new Set<EvidenceKind>()
    kinds.add(item.kind)
    own.set(item.service, kinds)
  }
  const candidates = [...own.entries()].map(([id, kinds]): Candidate => {
    const service = index.services.get(id)!
    const inherited = service.runsOn === null ? [] : [...(own.get(service.runsOn) ?? [])]
    return { service, kinds: new Set([...kinds, ...inherited]) }
  })
  const [winner] = candidates.sort(compareCandidates)
  if (winner === undefined) return { service: null, confidence: 'low', evidence }

  const explained = new Set([winner.service.id, winner.service.runsOn])
  const conflict = evidence.some((item) => !explained.has(item.service))
  const strong =
    winner.kinds.has('network') ||
    (winner.kinds.has('ptr') && input.ptrConfirmed === true) ||
    winner.kinds.size >= 2
  const confidence: Confidence = conflict ? 'low' : strong ? 'high' : 'medium'
  return { service: summary(winner.service), confidence, evidence }
}

export type SourceStatus = 'legitimate' | 'unknown' | 'suspicious' | 'forwarder'

/** What a user said about a source; it always wins over the classification. */
export type SourceOverride = 'legitimate' | 'unwanted' | 'forwarder'

/** A source's traffic over the period being judged (counts, not ratios, so zero volume is explicit). */
export interface SourceRates {
  /** Messages reported for the source. */
  messages: number
  /** Of those, messages that passed DMARC: SPF or DKIM passed and aligned (RFC 7489 §3.1). */
  dmarcPass: number
  /** The IP has a PTR name at all (confirmed or not). */
  hasPtr: boolean
}

/**
 * 1. A user override wins: `unwanted` is shown as `suspicious`.
 * 2. A forwarder service (mailing list, forwarding) → `forwarder`, whatever its results: forwarding
 *    breaks SPF by design, and DKIM only when the content changes.
 * 3. A known service with any aligned pass → `legitimate`: the domain authorised it.
 * 4. No known service, some volume, nothing passing DMARC, no PTR → `suspicious`: the profile of
 *    direct-to-MX spoofing from unnamed hosts.
 * 5. Anything else → `unknown`, including a known service with no aligned pass (a sender to set up,
 *    or someone else's account on shared infrastructure: only the owner can tell).
 */
export function statusOf(
  classification: Pick<Classification, 'service'>,
  rates: SourceRates,
  override: SourceOverride | null,
): SourceStatus {
  if (override === 'unwanted') return 'suspicious'
  if (override !== null) return override
  const service = classification.service
  if (service?.forwarder) return 'forwarder'
  if (service !== null && rates.dmarcPass > 0) return 'legitimate'
  if (service === null && rates.messages > 0 && rates.dmarcPass === 0 && !rates.hasPtr) return 'suspicious'
  return 'unknown'
}
