// report_metadata and policy_published: values as read, the checks on them, and the schema variant.

import type { AggregateMetadata, AggregateParseError, PolicyPublished } from '../aggregate-types.ts'
import { detached, lowerValue, textValue, type XmlText } from './xml-text.ts'

const DMARC_2_NAMESPACE = 'urn:ietf:params:xml:ns:dmarc-2.0'
const DRAFT_NAMESPACE = 'http://dmarc.org/dmarc-xml/0.1'

/** Repeated elements kept per report or record; more is hostile, not a real report. */
export const MAX_REPEATED = 100

export interface MetadataDraft {
  version: string | null
  orgName: string | null
  email: string | null
  extraContactInfo: string | null
  reportId: string | null
  begin: string | null
  end: string | null
  errors: string[]
  generator: string | null
}

export type PolicyDraft = Omit<PolicyPublished, 'domain' | 'pct'> & {
  domain: string | null
  pct: string | null
}

export const newMetadataDraft = (): MetadataDraft => ({
  version: null,
  orgName: null,
  email: null,
  extraContactInfo: null,
  reportId: null,
  begin: null,
  end: null,
  errors: [],
  generator: null,
})

export const newPolicyDraft = (): PolicyDraft => ({
  domain: null,
  adkim: null,
  aspf: null,
  p: null,
  sp: null,
  np: null,
  pct: null,
  fo: null,
  testing: null,
  discoveryMethod: null,
})

/** Enumerated values and domain names: trimmed and lower-cased, unknown ones kept (`PASS` → `pass`). */
export const lower = (text: XmlText) => lowerValue(text)
export const optional = (text: XmlText) => {
  const value = textValue(text)
  return value === '' ? null : value
}
export const optionalLower = (text: XmlText) => {
  const value = lowerValue(text)
  return value === '' ? null : value
}

/** Some reporters wrap the report id (and the address) in `<...>`, like a Message-ID. */
function unwrap(text: XmlText): string {
  const value = textValue(text)
  return value.startsWith('<') && value.endsWith('>') ? value.slice(1, -1).trim() : value
}

/**
 * The namespace declarations of a start tag's attributes (Namespaces in XML 1.0 §3): `xmlns="…"`
 * under the prefix '', `xmlns:p="…"` under 'p'.
 */
export function namespaceDeclarations(attributes: string): [prefix: string, uri: string][] {
  // Tried only where an attribute begins (the lookbehind): from every `xmlns` inside a long attribute
  // value, `[^\s=]+` scanned to its end, quadratic in the start tag (15 s for a 7 KB gzipped mail).
  return [...attributes.matchAll(/(?<![^\s])xmlns(?::([^\s=]+))?\s*=\s*(["'])(.*?)\2/g)].map((m) => [
    m[1] ?? '',
    (m[3] ?? '').trim(),
  ])
}

/** The DMARC namespace a URI names (RFC 9990 Appendix A, or the draft's), else null. */
export function dmarcNamespace(uri: string | undefined): string | null {
  return uri === DMARC_2_NAMESPACE || uri === DRAFT_NAMESPACE ? uri : null
}

/** false when the report breaks a limit; the caller then fails with limit_exceeded. */
export function assignMetadataField(meta: MetadataDraft, name: string, text: XmlText): boolean {
  switch (name) {
    case 'org_name':
      meta.orgName = textValue(text)
      break
    case 'email':
      meta.email = unwrap(text) || null
      break
    case 'extra_contact_info':
      meta.extraContactInfo = optional(text)
      break
    case 'report_id':
      meta.reportId = unwrap(text)
      break
    case 'begin':
      meta.begin = textValue(text)
      break
    case 'end':
      meta.end = textValue(text)
      break
    case 'generator':
      meta.generator = optional(text)
      break
    case 'error': {
      const error = optional(text)
      if (error === null) break
      if (meta.errors.length >= MAX_REPEATED) return false
      meta.errors.push(error)
      break
    }
  }
  return true
}

export function assignPolicyField(policy: PolicyDraft, name: string, text: XmlText): void {
  switch (name) {
    case 'domain':
      policy.domain = lower(text)
      break
    case 'pct':
      policy.pct = textValue(text)
      break
    case 'discovery_method':
      policy.discoveryMethod = optionalLower(text)
      break
    case 'adkim':
    case 'aspf':
    case 'p':
    case 'sp':
    case 'np':
    case 'fo':
    case 'testing':
      policy[name] = optionalLower(text)
      break
  }
}

const missing = (path: string): AggregateParseError => ({
  code: 'missing_field',
  message: `${path} is missing`,
})

/**
 * The latest begin/end accepted: 2100-01-01T00:00:00Z. RFC 7489 Appendix C gives seconds since the
 * epoch; a time past this is another unit (a millisecond time of any day after 1970-02-17 is), and
 * it would give no real date (reportDay in ../store-aggregate.ts, the stored timestamps). No lower
 * bound but the epoch: the RFC 9990 Appendix B sample itself is dated 1979. Fixed, because the
 * parser has no clock.
 */
export const MAX_REPORT_TIME = 4_102_444_800

function checkTime(path: string, value: string | null): AggregateParseError | null {
  if (value === null) return missing(path)
  // Seconds, optionally with a fraction: NetEase (163.com, 126.com, yeah.net) writes `1337270400.0`,
  // and OpenDMARC's own tests read it; the fraction is dropped (unixSeconds).
  if (!/^[0-9]{1,15}(\.[0-9]{1,9})?$/.test(value)) {
    return { code: 'invalid_value', message: `${path} ${JSON.stringify(value)} is not a Unix time` }
  }
  if (Number(value) <= MAX_REPORT_TIME) return null
  const message = `${path} ${value} is after 2100-01-01 (milliseconds instead of seconds?)`
  return { code: 'invalid_value', message }
}

/** A checked begin/end (checkTime) as whole seconds. */
function unixSeconds(value: string | null): number {
  return Math.trunc(Number(value))
}

/** RFC 7489 Appendix C: org_name, report_id and date_range are required (org_name may be empty). */
export function checkMetadata(meta: MetadataDraft): AggregateParseError | null {
  if (meta.orgName === null) return missing('report_metadata/org_name')
  if (meta.reportId === null || meta.reportId === '') return missing('report_metadata/report_id')
  const invalid =
    checkTime('report_metadata/date_range/begin', meta.begin) ??
    checkTime('report_metadata/date_range/end', meta.end)
  if (invalid !== null || unixSeconds(meta.end) >= unixSeconds(meta.begin)) return invalid
  // A range that ends before it begins covers no time: the report cannot be placed in any period.
  const message = `report_metadata/date_range/end ${meta.end} is before begin ${meta.begin}`
  return { code: 'invalid_value', message }
}

export function checkPolicy(policy: PolicyDraft): AggregateParseError | null {
  return policy.domain === null || policy.domain === '' ? missing('policy_published/domain') : null
}

/**
 * The namespace decides when present. Otherwise a version of 2 or more, or any field RFC 7489
 * lacks (np, testing, discovery_method, generator: RFC 9990 Appendix A), means RFC 9990; reporters
 * omit the namespace, and the RFC 9990 sample itself says version 1.0. A version below 1 (0.1,
 * Amazon SES; 0, Outlook) is a pre-RFC draft. Anything else, including no version, is RFC 7489.
 */
function variantOf(meta: MetadataDraft, policy: PolicyDraft, namespace: string | null) {
  if (namespace === DMARC_2_NAMESPACE) return 'rfc9990'
  if (namespace === DRAFT_NAMESPACE) return 'draft'
  const version = meta.version === null ? Number.NaN : Number.parseFloat(meta.version)
  if (version >= 2) return 'rfc9990'
  if (version < 1) return 'draft'
  const bis = policy.np ?? policy.testing ?? policy.discoveryMethod ?? meta.generator
  return bis === null ? 'rfc7489' : 'rfc9990'
}

// The metadata outlives the report's records (a message's outcome, the stored row, logs), so its
// values are copies: a parsed value shares its chunk's storage (xml-text.ts).
const own = <T extends string | null>(value: T): T => (value === null ? value : (detached(value) as T))

/** Call after checkMetadata and checkPolicy passed. pct that is not an integer is dropped, not fatal. */
export function buildMetadata(
  meta: MetadataDraft,
  policy: PolicyDraft,
  namespace: string | null,
): AggregateMetadata {
  const pct = policy.pct !== null && /^[0-9]{1,3}$/.test(policy.pct) ? Number(policy.pct) : null
  return {
    variant: variantOf(meta, policy, namespace),
    version: own(meta.version),
    orgName: own(meta.orgName ?? ''),
    email: own(meta.email),
    extraContactInfo: own(meta.extraContactInfo),
    reportId: own(meta.reportId ?? ''),
    begin: unixSeconds(meta.begin),
    end: unixSeconds(meta.end),
    errors: meta.errors.map(own),
    generator: own(meta.generator),
    policy: {
      domain: own(policy.domain ?? ''),
      adkim: own(policy.adkim),
      aspf: own(policy.aspf),
      p: own(policy.p),
      sp: own(policy.sp),
      np: own(policy.np),
      pct,
      fo: own(policy.fo),
      testing: own(policy.testing),
      discoveryMethod: own(policy.discoveryMethod),
    },
  }
}
