// DMARC aggregate reports (RFC 7489 Appendix C, its drafts, RFC 9990). Enumerated values are kept
// as the reporter wrote them, lower-cased and trimmed, even when unknown (`hardfail`, `unused`):
// the pipeline normalises them for counting but never drops them.

export interface AggregateMetadata {
  /** Which schema the report follows: detected by namespace, or by fields when it is missing. */
  variant: 'rfc7489' | 'rfc9990' | 'draft'
  version: string | null
  orgName: string
  email: string | null
  extraContactInfo: string | null
  /** The report id with surrounding `<...>` and white space removed (some reporters wrap it). */
  reportId: string
  /** Unix seconds, as published. A range over a day is kept as is. */
  begin: number
  end: number
  errors: string[]
  generator: string | null
  policy: PolicyPublished
}

export interface PolicyPublished {
  domain: string
  adkim: string | null
  aspf: string | null
  p: string | null
  sp: string | null
  np: string | null
  pct: number | null
  fo: string | null
  /** RFC 9990 `testing` (y/n). */
  testing: string | null
  discoveryMethod: string | null
}

export interface AuthDkim {
  domain: string
  selector: string | null
  result: string
  humanResult: string | null
}

export interface AuthSpf {
  domain: string
  /** `mfrom` or `helo`; null when not given (RFC 7489 default: mfrom). */
  scope: string | null
  result: string
}

export interface PolicyOverrideReason {
  type: string
  comment: string | null
}

export interface AggregateRecord {
  sourceIp: string
  count: number
  disposition: string
  /** policy_evaluated: what the reporter computed. */
  dkimEvaluated: string | null
  spfEvaluated: string | null
  reasons: PolicyOverrideReason[]
  headerFrom: string
  envelopeFrom: string | null
  envelopeTo: string | null
  dkim: AuthDkim[]
  spf: AuthSpf[]
}

/** Everything the parser refuses, with a precise, stable reason (quarantine shows it). */
export type AggregateParseError =
  | { code: 'not_xml'; message: string }
  | { code: 'not_aggregate_report'; message: string }
  | { code: 'missing_field'; message: string }
  | { code: 'invalid_value'; message: string }
  | { code: 'limit_exceeded'; message: string }
  | { code: 'empty'; message: string }

export type AggregateEvent =
  | { type: 'metadata'; metadata: AggregateMetadata }
  | { type: 'record'; record: AggregateRecord }
  | { type: 'error'; error: AggregateParseError }

export interface XmlLimits {
  /** Deepest element nesting accepted (a DMARC report needs 5). */
  maxDepth: number
  /** Elements in the whole document. */
  maxElements: number
  /** Characters of text in one element. */
  maxTextLength: number
}

export const DEFAULT_XML_LIMITS: XmlLimits = {
  maxDepth: 32,
  maxElements: 50_000_000,
  maxTextLength: 64 * 1024,
}
