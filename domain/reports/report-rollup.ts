import { detached } from './aggregate/xml-text.ts'
import type { AggregateRecord } from './aggregate-types.ts'
import { createSourceTable, type SourceRollup } from './source-table.ts'
import type { RecordOutcome } from './store-aggregate.ts'

export { MAX_EVIDENCE_DOMAINS, type SourceRollup } from './source-table.ts'

// The figures one aggregate report adds to the rollups, accumulated while its records stream past,
// so storage never reads the records back. A report counts on one day (its range's first), so the
// grain inside a report is the source IP, the disposition and the two alignments. Every figure is
// weighted by the record's count, never by rows (RFC 7489 §7.2: a row stands for `count` messages).

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
  // no lower-casing or key building per record. Keys and names are copies (detached): a parsed
  // value is a slice that would keep its whole chunk alive (aggregate/xml-text.ts).
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
