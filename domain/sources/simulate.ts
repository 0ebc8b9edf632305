import { mapBounded } from '../shared/map-bounded.ts'
// What-if for a proposed SPF record (issue #5): replay the sending IPs of recent aggregate reports
// through check_host() (RFC 7208 §4) against the proposed record, and report which sources, and how
// many messages, would newly fail or newly pass DMARC. The DMARC policy what-if is in
// simulate-dmarc.ts. docs/simulation.md describes the approximations and the output.

import type { DnsResolver } from '../dns/ports.ts'
import { invalid, ok, type Result } from '../shared/result.ts'
import { analyzeSpf } from '../spf/analysis.ts'
import { checkHost, isCheckableDomain, type SpfResult } from '../spf/check-host.ts'
import { MAX_DNS_TERMS } from '../spf/limits.ts'
import { memoizedResolver, normalizeName } from '../spf/lookups.ts'
import { overlaySpfRecord } from '../spf/overlay-resolver.ts'
import { parseSpfRecord } from '../spf/record.ts'
import type { SpfWarning } from '../spf/warnings.ts'
import type { SourceStats } from './source-stats.ts'

export {
  type DmarcPolicySimulation,
  type DmarcSourceSimulation,
  type SimulateDmarcPolicyInput,
  simulateDmarcPolicy,
} from './simulate-dmarc.ts'

export interface SimulateSpfDeps {
  dns: DnsResolver
  /** For the `t` macro (RFC 7208 §7.3); read once per simulation. */
  now: () => Date
}

export interface SimulateSpfInput {
  /** The policy domain: the domain whose SPF record is being replaced. */
  domain: string
  proposedRecord: string
  sources: SourceStats[]
  /** Sources evaluated, largest first (default 500). */
  maxSources?: number
  /** check_host() evaluations in flight at once (default 8). */
  concurrency?: number
}

export type SpfSimulationOutcome = 'newly_failing' | 'newly_passing' | 'unchanged' | 'unaffected'

export interface SpfSourceSimulation {
  ip: string
  messages: number
  /** Messages that passed DMARC in the reports. */
  dmarcPass: number
  dkimAligned: number
  spfAligned: number
  /** spfAligned / messages (0 without messages). */
  currentSpfAlignedShare: number
  spfDomains: string[]
  /** check_host() against the proposed record; null when the source is `unaffected` (not evaluated). */
  proposed: SpfResult | null
  /** The deciding term, or why (none, permerror, temperror), as check_host() reports them. */
  mechanism: string | null
  reason: string | null
  outcome: SpfSimulationOutcome
  /** Messages that pass DMARC today and would not (they passed through SPF alone). */
  newlyFailing: number
  /** Messages that fail DMARC today and would pass through SPF. */
  newlyPassing: number
  wouldPassDmarc: number
}

export interface SpfSimulationTotals {
  sources: number
  messages: number
  currentlyPassingDmarc: number
  wouldPassDmarc: number
  newlyFailing: { sources: number; messages: number }
  newlyPassing: { sources: number; messages: number }
  unaffected: { sources: number; messages: number }
  /** Sources whose proposed result was an error (they count as not passing, RFC 7489 §6.6.2). */
  permerror: number
  temperror: number
}

export interface SpfSimulation {
  domain: string
  proposedRecord: string
  /** Worst-case DNS-querying terms of one evaluation of the proposed record (RFC 7208 §4.6.4). */
  lookups: number
  lookupLimit: number
  /** Error-level findings about the proposed record itself: each makes some or all checks permerror. */
  recordProblems: SpfWarning[]
  /** Every evaluated source, by messages (descending), then IP. */
  sources: SpfSourceSimulation[]
  /** By newly failing messages (descending), then messages, then IP. */
  newlyFailing: SpfSourceSimulation[]
  /** By newly passing messages (descending), then messages, then IP. */
  newlyPassing: SpfSourceSimulation[]
  totals: SpfSimulationTotals
  /** Whether more than `maxSources` sources existed; the rest (the smallest) were not evaluated. */
  truncated: boolean
  totalSources: number
  skippedMessages: number
}

const DEFAULT_MAX_SOURCES = 500
const DEFAULT_CONCURRENCY = 8

export async function simulateSpf(
  deps: SimulateSpfDeps,
  input: SimulateSpfInput,
): Promise<Result<SpfSimulation>> {
  const domain = normalizeName(input.domain.trim())
  if (!isCheckableDomain(domain)) return invalid('domain', `'${input.domain}' is not a domain name.`)
  const maxSources = input.maxSources ?? DEFAULT_MAX_SOURCES
  if (!Number.isInteger(maxSources) || maxSources < 1)
    return invalid('max_sources', 'max_sources must be a whole number of at least 1.')
  // Surrounding whitespace is an artefact of pasting; inside the record it matters (RFC 7208 §12).
  const proposedRecord = input.proposedRecord.trim()
  const parsed = parseSpfRecord(proposedRecord)
  if (!parsed.ok) {
    const { error } = parsed
    const where = error.term === '' ? '' : ` at '${error.term}' (position ${error.position})`
    return invalid('record', `The proposed SPF record is not valid${where}: ${error.message}.`)
  }

  // One cache for the whole replay: hundreds of IPs walk the same includes (and the analysis below
  // has already fetched them all).
  const dns = memoizedResolver(overlaySpfRecord(deps.dns, domain, proposedRecord))
  const analysis = await analyzeSpf({ dns }, { domain })
  const now = deps.now()

  const ordered = [...input.sources].sort(byMessagesThenIp)
  const selected = ordered.slice(0, maxSources)
  const evaluated = await mapBounded(selected, input.concurrency ?? DEFAULT_CONCURRENCY, (source) =>
    simulateSource(dns, domain, now, source),
  )
  const skipped = ordered.slice(maxSources)
  return ok({
    domain,
    proposedRecord,
    lookups: analysis.lookups,
    lookupLimit: MAX_DNS_TERMS,
    recordProblems: analysis.warnings.filter((w) => w.severity === 'error'),
    sources: evaluated,
    newlyFailing: evaluated
      .filter((s) => s.outcome === 'newly_failing')
      .sort((a, b) => b.newlyFailing - a.newlyFailing || byMessagesThenIp(a, b)),
    newlyPassing: evaluated
      .filter((s) => s.outcome === 'newly_passing')
      .sort((a, b) => b.newlyPassing - a.newlyPassing || byMessagesThenIp(a, b)),
    totals: totalsOf(evaluated),
    truncated: skipped.length > 0,
    totalSources: ordered.length,
    skippedMessages: skipped.reduce((sum, s) => sum + s.messages, 0),
  })
}

/**
 * Reports name the domain SPF was checked for, not the MAIL FROM itself (RFC 7489 §7.2, Appendix C
 * spf/domain). Only checks of the policy domain read its record; a source seen only with other
 * domains (an ESP's bounce domain, a subdomain under relaxed alignment, RFC 7489 §3.1.2) keeps its
 * SPF results whatever the policy domain publishes. With no SPF domain reported at all, the policy
 * domain is assumed.
 */
function readsProposedRecord(source: SourceStats, domain: string): boolean {
  return source.spfDomains.length === 0 || source.spfDomains.some((d) => normalizeName(d) === domain)
}

async function simulateSource(
  dns: DnsResolver,
  domain: string,
  now: Date,
  source: SourceStats,
): Promise<SpfSourceSimulation> {
  const messages = Math.max(0, source.messages)
  const dmarcPass = Math.min(messages, Math.max(0, source.dmarcPass))
  // DMARC passes when DKIM or SPF is aligned (RFC 7489 §4.2), so the messages that pass through SPF
  // alone are |DKIM ∪ SPF| - |DKIM|. Floored because rollups of inconsistent reports can overshoot.
  const spfOnly = Math.max(0, dmarcPass - source.dkimAligned)
  const base = {
    ip: source.ip,
    messages,
    dmarcPass,
    dkimAligned: source.dkimAligned,
    spfAligned: source.spfAligned,
    currentSpfAlignedShare: messages === 0 ? 0 : source.spfAligned / messages,
    spfDomains: source.spfDomains,
  }
  if (!readsProposedRecord(source, domain)) {
    const outcome = 'unaffected' as const
    return { ...base, proposed: null, mechanism: null, reason: null, outcome, ...effect(0, 0, dmarcPass) }
  }
  // The reports do not carry the MAIL FROM local-part or the HELO name: postmaster@ is what RFC 7208
  // §4.3 substitutes for a missing local-part, and the PTR name is the likeliest HELO (§2.3).
  const checked = await checkHost(
    { dns },
    { ip: source.ip, domain, sender: `postmaster@${domain}`, helo: source.ptr ?? domain, now },
  )
  const result = {
    proposed: checked.result,
    mechanism: checked.mechanism ?? null,
    reason: checked.reason ?? null,
  }
  if (checked.result === 'pass') {
    // With the policy domain as MAIL FROM, an SPF pass is aligned (RFC 7489 §3.1.2), so every
    // message that fails DMARC today would pass.
    const gained = messages - dmarcPass
    const outcome = gained > 0 ? 'newly_passing' : 'unchanged'
    return { ...base, ...result, outcome, ...effect(0, gained, messages) }
  }
  // Anything but pass, including temperror and permerror, is not an aligned SPF pass (RFC 7489
  // §6.6.2): what passed through SPF alone now fails.
  const outcome = spfOnly > 0 ? 'newly_failing' : 'unchanged'
  return { ...base, ...result, outcome, ...effect(spfOnly, 0, dmarcPass - spfOnly) }
}

function effect(newlyFailing: number, newlyPassing: number, wouldPassDmarc: number) {
  return { newlyFailing, newlyPassing, wouldPassDmarc }
}

function totalsOf(sources: readonly SpfSourceSimulation[]): SpfSimulationTotals {
  const totals: SpfSimulationTotals = {
    sources: sources.length,
    messages: 0,
    currentlyPassingDmarc: 0,
    wouldPassDmarc: 0,
    newlyFailing: { sources: 0, messages: 0 },
    newlyPassing: { sources: 0, messages: 0 },
    unaffected: { sources: 0, messages: 0 },
    permerror: 0,
    temperror: 0,
  }
  for (const s of sources) {
    totals.messages += s.messages
    totals.currentlyPassingDmarc += s.dmarcPass
    totals.wouldPassDmarc += s.wouldPassDmarc
    if (s.outcome === 'newly_failing') count(totals.newlyFailing, s.newlyFailing)
    if (s.outcome === 'newly_passing') count(totals.newlyPassing, s.newlyPassing)
    if (s.outcome === 'unaffected') count(totals.unaffected, s.messages)
    if (s.proposed === 'permerror') totals.permerror += 1
    if (s.proposed === 'temperror') totals.temperror += 1
  }
  return totals
}

type Ranked = Pick<SourceStats, 'messages' | 'ip'>

function count(bucket: { sources: number; messages: number }, messages: number) {
  bucket.sources += 1
  bucket.messages += messages
}

function byMessagesThenIp(a: Ranked, b: Ranked): number {
  return b.messages - a.messages || (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0)
}
