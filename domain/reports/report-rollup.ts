import { ipv4Number } from '../spf/ip.ts'
import { detached } from './aggregate/xml-text.ts'
import type { AggregateRecord } from './aggregate-types.ts'
import type { RecordOutcome } from './store-aggregate.ts'

// The figures one aggregate report adds to the rollups, accumulated while its records stream past,
// so storage never reads the records back. A report counts on one day (its range's first), so the
// grain inside a report is the source IP, the disposition and the two alignments. Every figure is
// weighted by the record's count, never by rows (RFC 7489 §7.2: a row stands for `count` messages).

export interface SourceRollup {
  sourceIp: string
  disposition: string
  dkimAligned: boolean
  spfAligned: boolean
  messages: number
  /** Messages with some SPF / DKIM pass as reported, aligned or not. */
  spfPass: number
  dkimPass: number
  /** Messages the reporter let through for forwarding (RFC 7489 Appendix C PolicyOverrideType). */
  forwarded: number
  /** DKIM domains that signed with a pass, and SPF domains checked: classification evidence. */
  dkimDomains: readonly string[]
  spfDomains: readonly string[]
}

/** Kept per rollup row: enough to name the services behind an IP, bounded whatever the report. */
export const MAX_EVIDENCE_DOMAINS = 8
const FORWARDING = new Set(['forwarded', 'mailing_list', 'trusted_forwarder'])

export interface SelectorSeen {
  selector: string
  signingDomain: string
  messages: number
}

export interface ReportTotals {
  records: number
  messages: number
  dmarcPass: number
  dkimAligned: number
  spfAligned: number
  dispositionNone: number
  dispositionQuarantine: number
  dispositionReject: number
  dispositionOther: number
}

export interface RollupAccumulator {
  add(record: AggregateRecord, outcome: RecordOutcome): void
  totals(): ReportTotals
  /** DKIM selectors the report shows signing for each domain (lower-cased), whatever the result. */
  selectors(): SelectorSeen[]
  /** One row per (IP, disposition, alignment), produced on demand (a large report streams them). */
  sources(): Generator<SourceRollup>
}

/** Messages aligned by neither DKIM nor SPF, per source IP (the "top failing sources" figure). */
export function failingSources(sources: Iterable<SourceRollup>): { sourceIp: string; messages: number }[] {
  const failing = new Map<string, number>()
  for (const s of sources)
    if (!s.dkimAligned && !s.spfAligned) failing.set(s.sourceIp, (failing.get(s.sourceIp) ?? 0) + s.messages)
  return [...failing].map(([sourceIp, messages]) => ({ sourceIp, messages }))
}

// Every string kept here past its record is a copy (detached): parsed values are slices that share
// their chunk's storage (aggregate/xml-text.ts), so one kept source IP would keep its whole chunk
// alive. Copying the few values kept, rather than every value read, saved ~0.1 CPU-s on the
// 100,000-record report.
//
// A large report has about one source per record (100,000 for the largest): sources live in
// parallel arrays indexed through one Map, with no object per source, and evidence lists stay
// shared empty arrays until a domain shows up, so the live heap stays a few dozen bytes a source.
const NONE: readonly string[] = []

/** Lower-case, no trailing dot; null for what cannot be a domain name (it is stored space-separated). */
function evidenceName(domain: string): string | null {
  const name = domain.trim().toLowerCase().replace(/\.$/, '')
  return name === '' || /\s/.test(name) ? null : name
}

/**
 * The evidence list with `name` added. Lists are never changed in place: most sources show one
 * domain, and the one-name list of each domain is shared by every source that shows only it (a
 * list per source was two arrays per source, ~200,000 of them in the largest report).
 */
function withEvidence(
  domains: readonly string[],
  name: string | null,
  single: (name: string) => readonly string[],
): readonly string[] {
  if (name === null || domains.length >= MAX_EVIDENCE_DOMAINS || domains.includes(name)) return domains
  return domains === NONE ? single(name) : [...domains, name]
}

// The dispositions a source row keeps are the spec's few values (RFC 7489 §7.2.1.1
// DispositionType): one copy of each rather than one per source; an unknown one is copied like
// every other value kept here.
function internedDisposition(disposition: string): string {
  if (disposition === 'none') return 'none'
  if (disposition === 'quarantine') return 'quarantine'
  if (disposition === 'reject') return 'reject'
  return detached(disposition)
}

function createSourceTable() {
  // Reports repeat the same few domains on every record: normalise each spelling once.
  const names = new Map<string, string | null>()
  // The parser hands out the same string for the same lower-cased value (aggregate/xml-text.ts), so
  // the last domain of each kind (DKIM, SPF) is found again by a comparison, without the Map.
  let lastDkim = ''
  let lastDkimName: string | null = null
  let lastSpf = ''
  let lastSpfName: string | null = null
  const nameOf = (domain: string) => {
    let name = names.get(domain)
    if (name === undefined) {
      // One copy serves as the key and, when normalising changes nothing, as the name too.
      const key = detached(domain)
      name = evidenceName(key)
      if (names.size < 10_000) names.set(key, name)
    }
    return name
  }
  const singles = new Map<string, readonly string[]>()
  const single = (name: string) => {
    let list = singles.get(name)
    if (list === undefined) {
      list = [name]
      if (singles.size < 10_000) singles.set(name, list)
    }
    return list
  }
  // IP → its first row; further (disposition, alignment) combinations of the same IP chain on
  // through `next`. No key string per record: building and hashing 100,000 of them was measured
  // at a quarter of the accumulator's time.
  // Canonical IPv4 addresses (nearly all) are keyed by their number: a 100,000-entry Map finds a
  // number faster than a fresh string it must hash and compare.
  const index = new Map<string, number>()
  const v4Index = new Map<number, number>()
  const next: number[] = []
  const ips: string[] = []
  const dispositions: string[] = []
  const flags: number[] = []
  const messages: number[] = []
  const spfPass: number[] = []
  const dkimPass: number[] = []
  const forwarded: number[] = []
  const dkimDomains: (readonly string[])[] = []
  const spfDomains: (readonly string[])[] = []
  return {
    add(record: AggregateRecord, outcome: RecordOutcome) {
      const count = record.count
      const flag = (outcome.dkimAligned ? 1 : 0) | (outcome.spfAligned ? 2 : 0)
      const v4 = ipv4Number(record.sourceIp)
      const first = v4 === -1 ? index.get(record.sourceIp) : v4Index.get(v4)
      let i = first
      while (i !== undefined && i !== -1 && (flags[i] !== flag || dispositions[i] !== record.disposition))
        i = next[i]
      if (i === undefined || i === -1) {
        const ip = detached(record.sourceIp)
        i = ips.push(ip) - 1
        if (first === undefined) {
          if (v4 === -1) index.set(ip, i)
          else v4Index.set(v4, i)
        } else {
          // Link the new row right after the IP's first row.
          next.push(next[first]!)
          next[first] = i
        }
        if (next.length === i) next.push(-1)
        dispositions.push(internedDisposition(record.disposition))
        flags.push(flag)
        messages.push(0)
        spfPass.push(0)
        dkimPass.push(0)
        forwarded.push(0)
        dkimDomains.push(NONE)
        spfDomains.push(NONE)
      }
      messages[i]! += count
      let signed = false
      for (const signature of record.dkim) {
        if (signature.result !== 'pass') continue
        signed = true
        if (signature.domain !== lastDkim) {
          lastDkim = signature.domain
          lastDkimName = nameOf(lastDkim)
        }
        dkimDomains[i] = withEvidence(dkimDomains[i]!, lastDkimName, single)
      }
      if (signed) dkimPass[i]! += count
      let passed = false
      for (const check of record.spf) {
        if (check.result === 'pass') passed = true
        if (check.domain !== lastSpf) {
          lastSpf = check.domain
          lastSpfName = nameOf(lastSpf)
        }
        spfDomains[i] = withEvidence(spfDomains[i]!, lastSpfName, single)
      }
      if (passed) spfPass[i]! += count
      if (record.reasons.some((reason) => FORWARDING.has(reason.type))) forwarded[i]! += count
    },
    *rows(): Generator<SourceRollup> {
      for (let i = 0; i < ips.length; i++)
        yield {
          sourceIp: ips[i]!,
          disposition: dispositions[i]!,
          dkimAligned: (flags[i]! & 1) !== 0,
          spfAligned: (flags[i]! & 2) !== 0,
          messages: messages[i]!,
          spfPass: spfPass[i]!,
          dkimPass: dkimPass[i]!,
          forwarded: forwarded[i]!,
          dkimDomains: dkimDomains[i]!,
          spfDomains: spfDomains[i]!,
        }
    },
  }
}

export function createRollupAccumulator(): RollupAccumulator {
  const totals: ReportTotals = {
    records: 0,
    messages: 0,
    dmarcPass: 0,
    dkimAligned: 0,
    spfAligned: 0,
    dispositionNone: 0,
    dispositionQuarantine: 0,
    dispositionReject: 0,
    dispositionOther: 0,
  }
  const sources = createSourceTable()
  // Keyed by the spellings as reported (a few per report), merged case-insensitively at the end:
  // no lower-casing or key building per record.
  const selectors = new Map<string, Map<string, SelectorSeen>>()
  return {
    add(record, outcome) {
      const count = record.count
      totals.records++
      totals.messages += count
      if (outcome.dmarcPass) totals.dmarcPass += count
      if (outcome.dkimAligned) totals.dkimAligned += count
      if (outcome.spfAligned) totals.spfAligned += count
      // The parser lower-cases dispositions; unknown ones are kept and counted as "other". RFC 9990's
      // `pass` (DMARC passed, no policy applied) is delivery without action: counted as `none`
      // (normalizeDisposition in alignment.ts; docs/decisions-aggregate-parser.md).
      if (record.disposition === 'none') totals.dispositionNone += count
      else if (record.disposition === 'quarantine') totals.dispositionQuarantine += count
      else if (record.disposition === 'reject') totals.dispositionReject += count
      else if (record.disposition === 'pass') totals.dispositionNone += count
      else totals.dispositionOther += count
      sources.add(record, outcome)
      for (const signature of record.dkim) {
        if (!signature.selector || !signature.domain) continue
        let bySelector = selectors.get(signature.domain)
        if (bySelector === undefined) {
          bySelector = new Map()
          selectors.set(detached(signature.domain), bySelector)
        }
        const seen = bySelector.get(signature.selector)
        if (seen === undefined) {
          const selector = detached(signature.selector)
          bySelector.set(selector, { selector, signingDomain: detached(signature.domain), messages: count })
        } else seen.messages += count
      }
    },
    totals: () => ({ ...totals }),
    selectors: () => {
      const merged = new Map<string, SelectorSeen>()
      for (const bySelector of selectors.values())
        for (const seen of bySelector.values()) {
          const selector = seen.selector.toLowerCase()
          const signingDomain = seen.signingDomain.toLowerCase()
          const key = `${selector}\u0000${signingDomain}`
          const known = merged.get(key)
          if (known === undefined) merged.set(key, { selector, signingDomain, messages: seen.messages })
          else known.messages += seen.messages
        }
      return [...merged.values()]
    },
    sources: () => sources.rows(),
  }
}
