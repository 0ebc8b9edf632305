// Identifier alignment for aggregate-report records (RFC 7489 §3.1), recomputed from the auth
// results rather than trusted from policy_evaluated, plus the closed value sets used for counting.
// Raw reporter values stay on the record (aggregate-types.ts); these only group them.

import { getDomain } from 'tldts'
import { detached } from './aggregate/xml-text.ts'
import type { AggregateRecord, PolicyPublished } from './aggregate-types.ts'

/** The Organizational Domain of a name (RFC 7489 §3.2), or null when it has none. */
export type OrganizationalDomain = (domain: string) => string | null

export interface AlignmentDeps {
  organizationalDomain: OrganizationalDomain
}

/**
 * RFC 7489 §3.2 over the Public Suffix List, private suffixes included (so `a.github.io` and
 * `b.github.io` are different organizations). Records repeat the same few domains, so lookups are
 * memoised; the cache is emptied when full, which keeps memory bounded. It outlives the report, so
 * what it keeps is copied (parsed values share their chunk's storage: aggregate/xml-text.ts).
 */
export function publicSuffixOrganizationalDomain(maxEntries = 10_000): OrganizationalDomain {
  const cache = new Map<string, string | null>()
  return (domain) => {
    const known = cache.get(domain)
    if (known !== undefined) return known
    if (cache.size >= maxEntries) cache.clear()
    // The answer is a slice of its input: asked of the key's copy, it shares only that copy.
    const key = detached(domain)
    const organizational = getDomain(key, { allowPrivateDomains: true })
    cache.set(key, organizational)
    return organizational
  }
}

export type AlignmentMode = 'relaxed' | 'strict'

/** adkim/aspf: `s` is strict; anything else, or nothing, is relaxed (RFC 7489 §6.3 default `r`). */
export const alignmentMode = (tag: string | null): AlignmentMode =>
  tag?.trim().toLowerCase() === 's' ? 'strict' : 'relaxed'

// Per record: the parser hands the tags over trimmed and lower-cased, so the usual values need no
// new strings.
const modeOf = (tag: string | null): AlignmentMode =>
  tag === null || tag === 'r' ? 'relaxed' : tag === 's' ? 'strict' : alignmentMode(tag)

const canonical = (domain: string) => {
  const name = domain.trim().toLowerCase()
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/**
 * RFC 7489 §3.1.1, §3.1.2: strict needs the same name; relaxed needs the same Organizational
 * Domain. A name without one (an IP address, a bare TLD) aligns only with itself.
 */
export function domainsAlign(deps: AlignmentDeps, a: string, b: string, mode: AlignmentMode): boolean {
  return alignsWith(deps, a, canonical(b), mode)
}

/** domainsAlign with the second name already canonical (a record's header_from, once per record). */
function alignsWith(deps: AlignmentDeps, a: string, y: string, mode: AlignmentMode): boolean {
  const x = canonical(a)
  if (x === '' || y === '') return false
  if (x === y) return true
  if (mode === 'strict') return false
  const organizational = deps.organizationalDomain(x)
  return organizational !== null && organizational === deps.organizationalDomain(y)
}

export interface RecordAlignment {
  dkimAligned: boolean
  spfAligned: boolean
  /** RFC 7489 §3.1: DMARC passes when either identifier is authenticated and aligned. */
  dmarc: 'pass' | 'fail'
}

export interface AlignRecordInput {
  record: Pick<AggregateRecord, 'headerFrom' | 'dkim' | 'spf'>
  policy: Pick<PolicyPublished, 'adkim' | 'aspf'>
}

export function alignRecord(deps: AlignmentDeps, input: AlignRecordInput): RecordAlignment {
  const { record, policy } = input
  const dkimMode = modeOf(policy.adkim)
  const spfMode = modeOf(policy.aspf)
  const headerFrom = canonical(record.headerFrom)
  // §3.1.1: any valid signature whose d= aligns is enough.
  const dkimAligned = record.dkim.some(
    (d) => normalizeResult(d.result) === 'pass' && alignsWith(deps, d.domain, headerFrom, dkimMode),
  )
  // §3.1.2: SPF aligns through the MAIL FROM identity only; a HELO result does not count. A missing
  // scope means mfrom (RFC 7489 Appendix C; RFC 9990 drops the element).
  const spfAligned = record.spf.some(
    (s) =>
      (s.scope === null || s.scope.trim().toLowerCase() === 'mfrom') &&
      normalizeResult(s.result) === 'pass' &&
      alignsWith(deps, s.domain, headerFrom, spfMode),
  )
  return { dkimAligned, spfAligned, dmarc: dkimAligned || spfAligned ? 'pass' : 'fail' }
}

/** The results counted apart: RFC 7489 Appendix C DKIMResultType and SPFResultType, and `other`. */
export type ResultCategory =
  | 'pass'
  | 'fail'
  | 'softfail'
  | 'neutral'
  | 'none'
  | 'temperror'
  | 'permerror'
  | 'policy'
  | 'other'

// Keys are lower-cased with `_`, `-` and spaces removed, so `temp_error` and `PermError` match.
const RESULTS = new Map<string, ResultCategory>([
  ['pass', 'pass'],
  ['fail', 'fail'],
  // RFC 4408 wording some reporters still use.
  ['hardfail', 'fail'],
  ['softfail', 'softfail'],
  ['neutral', 'neutral'],
  ['none', 'none'],
  ['temperror', 'temperror'],
  ['permerror', 'permerror'],
  ['policy', 'policy'],
])

/**
 * A reporter's result in the closed set (`PASS` → pass, `hardfail` → fail). Unknown values
 * (`unused`) and missing ones are `other`: absent is not the same as `none` (no signature).
 */
export function normalizeResult(value: string | null): ResultCategory {
  if (value === null) return 'other'
  // The parser already lower-cases results: most values are found as they are.
  return RESULTS.get(value) ?? RESULTS.get(value.toLowerCase().replace(/[\s_-]/g, '')) ?? 'other'
}

export type DispositionCategory = 'none' | 'quarantine' | 'reject' | 'other'

/**
 * policy_evaluated/disposition in the closed set. RFC 9990 adds `pass` (DMARC passed, so no policy
 * was applied): for counting it is delivery without action, like `none`.
 */
export function normalizeDisposition(value: string | null): DispositionCategory {
  switch (value?.trim().toLowerCase()) {
    case 'none':
    case 'pass':
      return 'none'
    case 'quarantine':
      return 'quarantine'
    case 'reject':
      return 'reject'
    default:
      return 'other'
  }
}
