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

/** A domain as reported, normalised once, with the one-name evidence list shared by every row. */
interface Evidence {
  name: string | null
  single: readonly string[]
}

/**
 * The evidence list with `name` added. Lists are never changed in place: most rows show one
 * domain, and the one-name list of each domain is shared by every row that shows only it (a list
 * per row was two arrays per row, ~200,000 of them in the largest report).
 */
function withEvidence(domains: readonly string[], evidence: Evidence): readonly string[] {
  const name = evidence.name
  if (name === null) return domains
  if (domains === NONE) return evidence.single
  const n = domains.length
  if (n >= MAX_EVIDENCE_DOMAINS) return domains
  // A loop rather than includes(): the names compared are the same few strings, found by identity.
  for (let k = 0; k < n; k++) if (domains[k] === name) return domains
  return [...domains, name]
}

// The dispositions a row keeps are the spec's few values (RFC 7489 §7.2.1.1 DispositionType),
// stored as a small code; any other value gets a code of its own, kept as a copy.
const NONE_CODE = 0
const QUARANTINE_CODE = 1
const REJECT_CODE = 2

// An IPv4 text that is not canonical (or IPv6) keeps its own text: a flag bit says so, and its key
// is then the position in `texts`.
const TEXT_IP = 4

// Golden-ratio multiplier (Knuth's multiplicative hashing): spreads the IPv4 numbers of one
// network, which differ in their low bits, over the whole table.
const HASH = 0x9e3779b1

function octets(v4: number): string {
  return `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}`
}

export function createSourceTable() {
  // Reports repeat the same few domains on every record: normalise each spelling once. The parser
  // hands out the same string for the same lower-cased value (aggregate/xml-text.ts), so the last
  // domain of each kind (DKIM, SPF) is found again by a comparison, without the Map.
  const evidence = new Map<string, Evidence>()
  const singles = new Map<string, readonly string[]>()
  const evidenceOf = (domain: string): Evidence => {
    let known = evidence.get(domain)
    if (known === undefined) {
      // One copy serves as the key and, when normalising changes nothing, as the name too.
      const key = detached(domain)
      const name = evidenceName(key)
      let single = NONE
      if (name !== null) {
        single = singles.get(name) ?? [name]
        if (singles.size < 10_000) singles.set(name, single)
      }
      known = { name, single }
      if (evidence.size < 10_000) evidence.set(key, known)
    }
    return known
  }
  let lastDkim = ''
  let lastDkimEvidence: Evidence = { name: null, single: NONE }
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

  // Rows: typed arrays grown by doubling, no object and no string per row (a canonical IPv4 source,
  // nearly all of them, is kept as its number and written out again by rows()). Counts are
  // integers of at most 15 digits (integerValue in aggregate/xml-text.ts): Float64Array holds
  // their sums exactly as a JavaScript number does.
  let rows = 0
  let capacity = 1024
  let next = new Int32Array(capacity)
  let flags = new Uint8Array(capacity)
  let dispositions = new Int32Array(capacity)
  let keys = new Int32Array(capacity)
  let messages = new Float64Array(capacity)
  let spfPass = new Float64Array(capacity)
  let dkimPass = new Float64Array(capacity)
  let forwarded = new Float64Array(capacity)
  const dkimDomains: (readonly string[])[] = []
  const spfDomains: (readonly string[])[] = []
  const texts: string[] = []
  const grow = () => {
    capacity *= 2
    const wider = <T extends Int32Array | Uint8Array | Float64Array>(old: T, into: T): T => {
      into.set(old)
      return into
    }
    next = wider(next, new Int32Array(capacity))
    flags = wider(flags, new Uint8Array(capacity))
    dispositions = wider(dispositions, new Int32Array(capacity))
    keys = wider(keys, new Int32Array(capacity))
    messages = wider(messages, new Float64Array(capacity))
    spfPass = wider(spfPass, new Float64Array(capacity))
    dkimPass = wider(dkimPass, new Float64Array(capacity))
    forwarded = wider(forwarded, new Float64Array(capacity))
  }

  // IP → its first row; further (disposition, alignment) rows of the same IP chain on through
  // `next`. Canonical IPv4 addresses are found in an open-addressing table (linear probing, at
  // most half full) of their numbers; the rest, rare, in a Map by their text.
  let bits = 10
  let slotKeys = new Int32Array(1 << bits)
  let slotRows = new Int32Array(1 << bits).fill(-1)
  let used = 0
  const slotOf = (v4: number): number => {
    const mask = (1 << bits) - 1
    let slot = Math.imul(v4, HASH) >>> (32 - bits)
    while (slotRows[slot] !== -1 && slotKeys[slot] !== v4) slot = (slot + 1) & mask
    return slot
  }
  const rehash = () => {
    const oldKeys = slotKeys
    const oldRows = slotRows
    bits++
    slotKeys = new Int32Array(1 << bits)
    slotRows = new Int32Array(1 << bits).fill(-1)
    for (let s = 0; s < oldRows.length; s++)
      if (oldRows[s] !== -1) {
        const slot = slotOf(oldKeys[s]!)
        slotKeys[slot] = oldKeys[s]!
        slotRows[slot] = oldRows[s]!
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
      const flag = (outcome.dkimAligned ? 1 : 0) | (outcome.spfAligned ? 2 : 0) | (textual ? TEXT_IP : 0)
      let slot = -1
      let first: number
      if (textual) first = textIndex.get(record.sourceIp) ?? -1
      else {
        slot = slotOf(v4)
        first = slotRows[slot]!
      }
      let i = first
      while (i !== -1 && (flags[i] !== flag || dispositions[i] !== code)) i = next[i]!
      if (i === -1) {
        if (rows === capacity) grow()
        i = rows++
        flags[i] = flag
        dispositions[i] = code
        dkimDomains.push(NONE)
        spfDomains.push(NONE)
        if (first !== -1) {
          // Link the new row right after the IP's first row.
          next[i] = next[first]!
          next[first] = i
          keys[i] = keys[first]!
        } else if (textual) {
          next[i] = -1
          const ip = detached(record.sourceIp)
          keys[i] = texts.push(ip) - 1
          textIndex.set(ip, i)
        } else {
          next[i] = -1
          keys[i] = v4
          slotKeys[slot] = v4
          slotRows[slot] = i
          if (++used * 2 > slotRows.length) rehash()
        }
      }
      messages[i]! += count
      let signed = false
      for (const signature of record.dkim) {
        if (signature.result !== 'pass') continue
        signed = true
        if (signature.domain !== lastDkim) {
          lastDkim = signature.domain
          lastDkimEvidence = evidenceOf(lastDkim)
        }
        dkimDomains[i] = withEvidence(dkimDomains[i]!, lastDkimEvidence)
      }
      if (signed) dkimPass[i]! += count
      let passed = false
      for (const check of record.spf) {
        if (check.result === 'pass') passed = true
        if (check.domain !== lastSpf) {
          lastSpf = check.domain
          lastSpfEvidence = evidenceOf(lastSpf)
        }
        spfDomains[i] = withEvidence(spfDomains[i]!, lastSpfEvidence)
      }
      if (passed) spfPass[i]! += count
      for (const reason of record.reasons)
        if (FORWARDING.has(reason.type)) {
          forwarded[i]! += count
          break
        }
    },
    *rows(): Generator<SourceRollup> {
      for (let i = 0; i < rows; i++) {
        const flag = flags[i]!
        yield {
          sourceIp: (flag & TEXT_IP) !== 0 ? texts[keys[i]!]! : octets(keys[i]!),
          disposition: dispositionNames[dispositions[i]!]!,
          dkimAligned: (flag & 1) !== 0,
          spfAligned: (flag & 2) !== 0,
          messages: messages[i]!,
          spfPass: spfPass[i]!,
          dkimPass: dkimPass[i]!,
          forwarded: forwarded[i]!,
          dkimDomains: dkimDomains[i]!,
          spfDomains: spfDomains[i]!,
        }
      }
    },
  }
}
