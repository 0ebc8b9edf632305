import { ipv4Number } from '../spf/ip.ts'
import { detached } from './aggregate/xml-text.ts'
import type { AggregateRecord } from './aggregate-types.ts'
import type { RecordOutcome } from './store-aggregate.ts'

// The per-source half of a report's rollup (report-rollup.ts): one row per (source IP,
// disposition, alignment), weighted by the record's count (RFC 7489 §7.2).
//
// A large report has about one source per record (100,000 for the largest), so this runs once per
// record and keeps one row per record. Every string kept past its record is a copy (detached):
// parsed values are slices that share their chunk's storage (aggregate/xml-text.ts), so one kept
// source IP would keep its whole chunk alive.
//
// Speed (issue #20): over the 100,000-record bench report, add() took ~200 ms with rows in ten JS
// arrays indexed by a Map<number, number>, a detached IP string and two evidence references per
// row; ~115 ms as below (sums of every add() timed in the stream, minimum of alternated rounds).
// The Map alone was most of it: 100,000 insertions into a Map cost ~6-40 ms where the table below
// takes ~4-8 ms, before the collector's share of its entries.

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
const NONE: readonly string[] = []

/** Lower-case, no trailing dot; null for what cannot be a domain name (it is stored space-separated). */
function evidenceName(domain: string): string | null {
  const name = domain.trim().toLowerCase().replace(/\.$/, '')
  return name === '' || /\s/.test(name) ? null : name
}

/**
 * A domain as reported, normalised once, with its one-name evidence list (by number, see `lists`;
 * 0 until a row first needs it).
 */
interface Evidence {
  name: string | null
  single: number
}

// The dispositions a row keeps are the spec's few values (RFC 7489 §7.2.1.1 DispositionType),
// stored as a small code; any other value gets a code of its own, kept as a copy.
const NONE_CODE = 0
const QUARANTINE_CODE = 1
const REJECT_CODE = 2

// An IPv4 text that is not canonical (or IPv6) keeps its own text: a flag bit says so, and its key
// is then the position in `texts`.
const TEXT_IP = 4

// Integers per row (see `ints`).
const STRIDE = 5

// Golden-ratio multiplier (Knuth's multiplicative hashing): spreads the IPv4 numbers of one
// network, which differ in their low bits, over the whole table.
const HASH = 0x9e3779b1

function octets(v4: number): string {
  return `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}`
}

export function createSourceTable() {
  // Evidence lists, numbered: a row keeps the numbers of its two lists in its integers, so there
  // are no arrays of 100,000 references for the collector to scan (measured as fast as two such
  // arrays, and smaller). Lists are never changed in place: most rows show one domain, and the
  // one-name list of each domain is shared by every row that shows only it. List 0 is the empty one.
  // A list of two names or more belongs to the one row (and kind) that made it, so it is replaced in
  // place when that row shows one more name: nothing is added to `lists` but a row's first list of
  // two names, and a one-name list made only when a row needs it, so `lists` stays bounded by the
  // rows (at most two lists each), whatever number of domains a hostile report repeats past the caches.
  const lists: (readonly string[])[] = [NONE]
  const singles = new Map<string, number>()
  const singleOf = (evidence: Evidence, name: string): number => {
    if (evidence.single === 0) {
      let single = singles.get(name)
      if (single === undefined) {
        single = lists.push([name]) - 1
        if (singles.size < 10_000) singles.set(name, single)
      }
      evidence.single = single
    }
    return evidence.single
  }
  const withEvidence = (id: number, evidence: Evidence): number => {
    const name = evidence.name
    if (name === null) return id
    if (id === 0) return singleOf(evidence, name)
    const domains = lists[id]!
    const n = domains.length
    if (n >= MAX_EVIDENCE_DOMAINS) return id
    // A loop rather than includes(): the names compared are the same few strings, found by identity.
    for (let k = 0; k < n; k++) if (domains[k] === name) return id
    // A new array rather than push(): a row already handed out by rows() keeps its list as it was.
    if (n >= 2) {
      lists[id] = [...domains, name]
      return id
    }
    return lists.push([...domains, name]) - 1
  }
  // Reports repeat the same few domains on every record: normalise each spelling once. The parser
  // hands out the same string for the same lower-cased value (aggregate/xml-text.ts), so the last
  // domain of each kind (DKIM, SPF) is found again by a comparison, without the Map.
  const evidence = new Map<string, Evidence>()
  const evidenceOf = (domain: string): Evidence => {
    let known = evidence.get(domain)
    if (known === undefined) {
      // One copy serves as the key and, when normalising changes nothing, as the name too.
      const key = detached(domain)
      known = { name: evidenceName(key), single: 0 }
      if (evidence.size < 10_000) evidence.set(key, known)
    }
    return known
  }
  let lastDkim = ''
  let lastDkimEvidence: Evidence = { name: null, single: 0 }
  let lastSpf = ''
  let lastSpfEvidence: Evidence = lastDkimEvidence

  const dispositionNames = ['none', 'quarantine', 'reject']
  const dispositionCodes = new Map<string, number>()
  const dispositionCode = (disposition: string): number => {
    if (disposition === 'none') return NONE_CODE
    if (disposition === 'quarantine') return QUARANTINE_CODE
    if (disposition === 'reject') return REJECT_CODE
    let code = dispositionCodes.get(disposition)
    if (code === undefined) {
      const name = detached(disposition)
      code = dispositionNames.push(name) - 1
      dispositionCodes.set(name, code)
    }
    return code
  }

  // Rows: two typed arrays, no object and no string per row (a canonical IPv4 source, nearly all of
  // them, is kept as its number and written out again by rows()). A row's integers sit side by
  // side, as do its counts, so a record touches two cache lines, and growing allocates two buffers.
  // They grow fourfold (as does the IP table): half as many large allocations as doubling, where
  // the collector's pauses land, measured ~55 ms of add() against ~70 ms; at most ~270 bytes a row
  // at the worst point, below the arrays, Map entry and string each row had before. Counts are
  // integers of at most 15 digits (integerValue in aggregate/xml-text.ts): Float64Array holds their
  // sums exactly as a JavaScript number does. They start small: nearly every report has a few
  // records, and a worker's batch builds one table per report (zeroing ~60 KB each at 1,024 rows
  // was ~1% of a worker's CPU on small reports); the sizes a large report grows to are the same.
  let rows = 0
  let capacity = 16
  // Per row: the next row of the same IP (-1: none), the IP (its number, or its place in `texts`),
  // the kind: disposition code * 8 + flags (bit 0 DKIM aligned, bit 1 SPF aligned, TEXT_IP), and
  // the numbers of its DKIM and SPF evidence lists.
  let ints = new Int32Array(STRIDE * capacity)
  // Per row: messages, SPF pass, DKIM pass, forwarded.
  let counts = new Float64Array(4 * capacity)
  const texts: string[] = []
  const grow = () => {
    capacity *= 4
    const wider = new Int32Array(STRIDE * capacity)
    wider.set(ints)
    ints = wider
    const larger = new Float64Array(4 * capacity)
    larger.set(counts)
    counts = larger
  }

  // IP → its first row; further (disposition, alignment) rows of the same IP chain on through
  // `next`. Canonical IPv4 addresses are found in an open-addressing table (linear probing, at
  // most half full) of their numbers; the rest, rare, in a Map by their text. A slot is two
  // integers side by side, the number and its row + 1 (0: empty), so a probe reads one cache line.
  let bits = 6
  let slots = new Int32Array(2 << bits)
  let used = 0
  const slotOf = (v4: number): number => {
    const mask = (1 << bits) - 1
    let slot = Math.imul(v4, HASH) >>> (32 - bits)
    while (slots[2 * slot + 1] !== 0 && slots[2 * slot] !== v4) slot = (slot + 1) & mask
    return slot
  }
  const rehash = () => {
    const old = slots
    bits += 2
    slots = new Int32Array(2 << bits)
    for (let s = 0; s < old.length; s += 2)
      if (old[s + 1] !== 0) {
        const slot = slotOf(old[s]!)
        slots[2 * slot] = old[s]!
        slots[2 * slot + 1] = old[s + 1]!
      }
  }
  const textIndex = new Map<string, number>()

  return {
    add(record: AggregateRecord, outcome: RecordOutcome) {
      const count = record.count
      const code = dispositionCode(record.disposition)
      const number = ipv4Number(record.sourceIp)
      const textual = number === -1
      // As an Int32Array holds it (255.255.255.255 is -1 there, no matter: `textual` tells).
      const v4 = number | 0
      const kind =
        code * 8 + ((outcome.dkimAligned ? 1 : 0) | (outcome.spfAligned ? 2 : 0) | (textual ? TEXT_IP : 0))
      let slot = -1
      let first: number
      if (textual) first = textIndex.get(record.sourceIp) ?? -1
      else {
        slot = slotOf(v4)
        first = slots[2 * slot + 1]! - 1
      }
      let i = first
      while (i !== -1 && ints[STRIDE * i + 2] !== kind) i = ints[STRIDE * i]!
      if (i === -1) {
        if (rows === capacity) grow()
        i = rows++
        ints[STRIDE * i + 2] = kind
        if (first !== -1) {
          // Link the new row right after the IP's first row.
          ints[STRIDE * i] = ints[STRIDE * first]!
          ints[STRIDE * first] = i
          ints[STRIDE * i + 1] = ints[STRIDE * first + 1]!
        } else if (textual) {
          ints[STRIDE * i] = -1
          const ip = detached(record.sourceIp)
          ints[STRIDE * i + 1] = texts.push(ip) - 1
          textIndex.set(ip, i)
        } else {
          ints[STRIDE * i] = -1
          ints[STRIDE * i + 1] = v4
          slots[2 * slot] = v4
          slots[2 * slot + 1] = i + 1
          if (++used * 2 > 1 << bits) rehash()
        }
      }
      const at = 4 * i
      counts[at]! += count
      let signed = false
      for (const signature of record.dkim) {
        if (signature.result !== 'pass') continue
        signed = true
        if (signature.domain !== lastDkim) {
          lastDkim = signature.domain
          lastDkimEvidence = evidenceOf(lastDkim)
        }
        ints[STRIDE * i + 3] = withEvidence(ints[STRIDE * i + 3]!, lastDkimEvidence)
      }
      if (signed) counts[at + 2]! += count
      let passed = false
      for (const check of record.spf) {
        if (check.result === 'pass') passed = true
        if (check.domain !== lastSpf) {
          lastSpf = check.domain
          lastSpfEvidence = evidenceOf(lastSpf)
        }
        ints[STRIDE * i + 4] = withEvidence(ints[STRIDE * i + 4]!, lastSpfEvidence)
      }
      if (passed) counts[at + 1]! += count
      for (const reason of record.reasons)
        if (FORWARDING.has(reason.type)) {
          counts[at + 3]! += count
          break
        }
    },
    *rows(): Generator<SourceRollup> {
      for (let i = 0; i < rows; i++) {
        const kind = ints[STRIDE * i + 2]!
        const at = 4 * i
        yield {
          sourceIp: (kind & TEXT_IP) !== 0 ? texts[ints[STRIDE * i + 1]!]! : octets(ints[STRIDE * i + 1]!),
          disposition: dispositionNames[kind >> 3]!,
          dkimAligned: (kind & 1) !== 0,
          spfAligned: (kind & 2) !== 0,
          messages: counts[at]!,
          spfPass: counts[at + 1]!,
          dkimPass: counts[at + 2]!,
          forwarded: counts[at + 3]!,
          dkimDomains: lists[ints[STRIDE * i + 3]!]!,
          spfDomains: lists[ints[STRIDE * i + 4]!]!,
        }
      }
    },
  }
}
