// Hosted DMARC records (issue #5): the user points `_dmarc.<domain>` by CNAME at
// `<label>._dmarc.<SPF_ZONE>` once, and the service serves the policy record there from its
// authoritative responder, so policy progression (domain/policy/) can change the policy without
// touching the user's DNS. A CNAME at `_dmarc.<domain>` is fine for DMARC: receivers look the
// record up with an ordinary TXT query, which follows the alias (RFC 9989 §4.10.1, RFC 7489 §6.6.3),
// and nothing else may live at `_dmarc.<domain>` anyway. Pure: text in, text out; see
// docs/hosted-dns.md and docs/policy-progression.md.

import { invalid, ok, type Result } from '../shared/result.ts'
import { type DmarcFinding, type DmarcPolicy, parseDmarcRecord } from './record.ts'

/** The label under SPF_ZONE that holds every hosted DMARC name. */
export const DMARC_SUBZONE = '_dmarc'
/**
 * A DMARC record is a few dozen bytes; 1,000 leaves room for several report URIs while keeping the
 * answer far below the 1,232-byte UDP size the responder uses, so receivers never need TCP.
 */
export const MAX_HOSTED_RECORD = 1000

export interface PolicyLevel {
  policy: DmarcPolicy
  /** RFC 7489 pct as written; null when the tag is absent (all mail). */
  pct: number | null
}

/** What the responder serves for a domain, as stored (hosted_records, kind 'dmarc'). */
export interface HostedDmarc {
  /** `<label>._dmarc.<zone>`, lower-case. */
  name: string
  record: string
  updatedAt: Date
}

export interface HostedDmarcView extends HostedDmarc, PolicyLevel {}

export interface CnameToPublish {
  /** `_dmarc.<domain>`. */
  name: string
  type: 'CNAME'
  /** The hosted name. */
  target: string
  /** The zone-file line. */
  record: string
}

/** `quarantine`, or `quarantine (pct=50)` when the record exempts part of the mail. */
export const describeLevel = (level: PolicyLevel) =>
  level.pct === null || level.pct === 100 ? level.policy : `${level.policy} (pct=${level.pct})`

export const hostedDmarcName = (label: string, zone: string) =>
  `${label}.${DMARC_SUBZONE}.${zone.toLowerCase().replace(/\.$/, '')}`

export function cnameToPublish(domain: string, hostedName: string): CnameToPublish {
  const name = `_dmarc.${domain}`
  return { name, type: 'CNAME', target: hostedName, record: `${name}. IN CNAME ${hostedName}.` }
}

/**
 * A record the service will serve: it must parse as DMARC (RFC 9989 §4.7, §4.8) with a valid p,
 * and sp / np valid when present. The parser would read a broken p as p=none when a rua is there
 * (RFC 9989 §4.10.1); hosting exists to state a policy, so that is refused rather than served.
 * `findings` are the parser's remarks on a record that is accepted (pct is historic, no rua, ...).
 */
export function validateHostedRecord(
  text: string,
  field = 'record',
): Result<{ record: string; level: PolicyLevel; findings: DmarcFinding[] }> {
  const record = text.trim()
  if (record.length > MAX_HOSTED_RECORD) {
    return invalid(field, `The DMARC record must be at most ${MAX_HOSTED_RECORD} characters.`)
  }
  if (/[^\x20-\x7e]/.test(record)) {
    return invalid(field, 'The DMARC record may contain printable ASCII characters only.')
  }
  const parsed = parseDmarcRecord(record)
  if (!parsed.ok) {
    const reason = parsed.findings[0]?.message ?? 'It is not a DMARC record.'
    return invalid(field, `The DMARC record is not usable: ${reason}`)
  }
  const { p, tags } = parsed.record
  const broken = (['p', 'sp', 'np'] as const).find(
    (tag) => (tag === 'p' && p === null) || (tags[tag] !== undefined && parsed.record[tag] === null),
  )
  if (broken !== undefined) {
    return invalid(
      field,
      broken === 'p'
        ? 'The DMARC record needs a p tag of none, quarantine or reject.'
        : `The ${broken} tag must be none, quarantine or reject.`,
    )
  }
  return ok({ record, level: { policy: p!, pct: parsed.record.pct }, findings: parsed.findings })
}

/** The policy a hosted (hence valid) record states; null for text that is not a usable record. */
export function policyLevelOf(text: string): PolicyLevel | null {
  const checked = validateHostedRecord(text)
  return checked.ok ? checked.value.level : null
}

export function hostedView(hosted: HostedDmarc): HostedDmarcView {
  const level = policyLevelOf(hosted.record) ?? { policy: 'none', pct: null }
  return { ...hosted, ...level }
}

interface Segment {
  /** Lower-case tag name, '' for a segment that is not tag=value. */
  tag: string
  text: string
}

const segmentsOf = (record: string): Segment[] =>
  record.split(';').map((text) => ({ tag: /^\s*([a-z]+)\s*=/i.exec(text)?.[1]?.toLowerCase() ?? '', text }))

/** Replaces the value of `tag` keeping its spacing, or inserts `tag=value` after `after`. */
function setTag(segments: Segment[], tag: string, value: string, after: readonly string[]): Segment[] {
  const at = segments.findIndex((segment) => segment.tag === tag)
  if (at >= 0) {
    const old = segments[at]!
    const lead = /^\s*/.exec(old.text)![0]
    const trail = /\s*$/.exec(old.text)![0]
    const next = [...segments]
    next[at] = { tag, text: `${lead}${tag}=${value}${trail}` }
    return next
  }
  let position = 0
  segments.forEach((segment, i) => {
    if (after.includes(segment.tag)) position = i
  })
  const next = [...segments]
  next.splice(position + 1, 0, { tag, text: ` ${tag}=${value}` })
  return next
}

const joinSegments = (segments: Segment[]) => segments.map((segment) => segment.text).join(';')

/**
 * The record with `p` set to `policy`, every other tag kept exactly as written (sp, np, rua, t, ...,
 * their order and spacing). `pct` undefined keeps the tag as written; 100 or null removes it (100 is
 * the default, and RFC 9989 dropped the tag: receivers that still read it, RFC 7489 §6.3, then apply
 * the policy to all mail); below 100 writes it. An sp absent stays absent, so subdomains follow p
 * (RFC 9989 §4.7); an explicit sp is the owner's choice and is not touched.
 */
export function withPolicy(record: string, policy: DmarcPolicy, pct?: number | null): string {
  let segments = setTag(segmentsOf(record), 'p', policy, ['v'])
  if (pct === null || pct === 100) segments = segments.filter((segment) => segment.tag !== 'pct')
  else if (pct !== undefined) {
    if (!Number.isInteger(pct) || pct < 0 || pct > 100) throw new Error(`pct ${pct} is not 0..100`)
    segments = setTag(segments, 'pct', String(pct), ['v', 'p'])
  }
  return joinSegments(segments)
}

/**
 * The record with `uri` in its rua list (appended when missing, compared case-insensitively), so the
 * service keeps receiving the aggregate reports progression is decided from (RFC 9989 §4.7: rua
 * takes a comma-separated list).
 */
export function withReportUri(record: string, uri: string): string {
  const segments = segmentsOf(record)
  const rua = segments.find((segment) => segment.tag === 'rua')
  if (rua === undefined) return joinSegments(setTag(segments, 'rua', uri, ['v', 'p', 'sp', 'np', 'pct']))
  const value = rua.text.slice(rua.text.indexOf('=') + 1).trim()
  const listed = value.split(',').map((item) => item.trim().replace(/!.*$/, '').toLowerCase())
  if (listed.includes(uri.toLowerCase())) return record
  return joinSegments(setTag(segments, 'rua', value === '' ? uri : `${value},${uri}`, []))
}

/**
 * The record hosting starts from: the domain's own published record when it has a usable one (so
 * hosting changes nothing receivers see), with the account's report address added to rua; else
 * monitoring only, `v=DMARC1; p=none; rua=mailto:<address>`. A record inherited from the
 * organizational domain is not the domain's own and is not copied.
 */
export function defaultHostedRecord(published: string | null, reportAddress: string): string {
  const uri = `mailto:${reportAddress}`
  const own = published === null ? null : validateHostedRecord(published)
  if (own?.ok) return withReportUri(own.value.record, uri)
  return `v=DMARC1; p=none; rua=${uri}`
}

/** Whether the record sends aggregate reports to `reportAddress` (progression needs them). */
export function reportsTo(record: string, reportAddress: string): boolean {
  const parsed = parseDmarcRecord(record)
  if (!parsed.ok) return false
  const wanted = reportAddress.toLowerCase()
  return parsed.record.rua.some((uri) => uri.scheme === 'mailto' && uri.address?.toLowerCase() === wanted)
}
