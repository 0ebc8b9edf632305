// Where an element sits in an aggregate report (RFC 7489 Appendix C, RFC 9990 Appendix A).
// Elements are recognised by local name within their parent, in any order. LEAF holds a value;
// IGNORED is inside something unknown (extensions, `<unknown-tag1>`) and is skipped whole.

export const OUTSIDE = 0
export const FEEDBACK = 1
export const METADATA = 2
export const DATE_RANGE = 3
export const POLICY = 4
export const RECORD = 5
export const ROW = 6
export const EVALUATED = 7
export const REASON = 8
export const IDENTIFIERS = 9
export const AUTH = 10
export const AUTH_DKIM = 11
export const AUTH_SPF = 12
export const LEAF = 13
export const IGNORED = 14

/** The context of an element named `name` opened in `parent`. */
export function enter(parent: number, name: string): number {
  switch (parent) {
    case OUTSIDE:
      // Anything around <feedback> is a wrapper (parsedmarc ikea.com sample: an unclosed <xs:schema>).
      return name === 'feedback' ? FEEDBACK : OUTSIDE
    case FEEDBACK:
      if (name === 'record') return RECORD
      if (name === 'report_metadata') return METADATA
      if (name === 'policy_published') return POLICY
      return name === 'version' ? LEAF : IGNORED
    case METADATA:
      return name === 'date_range' ? DATE_RANGE : LEAF
    case RECORD:
      if (name === 'row') return ROW
      // Some reporters write <identities> (a real 2013 report, tests/fixtures/dmarc-aggregate-variants/
      // SOURCES.md); parsedmarc reads it the same way.
      if (name === 'identifiers' || name === 'identities') return IDENTIFIERS
      return name === 'auth_results' ? AUTH : IGNORED
    case ROW:
      return name === 'policy_evaluated' ? EVALUATED : LEAF
    case EVALUATED:
      return name === 'reason' ? REASON : LEAF
    case AUTH:
      if (name === 'dkim') return AUTH_DKIM
      return name === 'spf' ? AUTH_SPF : IGNORED
    case LEAF:
    case IGNORED:
      return IGNORED
    default:
      // DATE_RANGE, POLICY, REASON, IDENTIFIERS, AUTH_DKIM, AUTH_SPF hold values only.
      return LEAF
  }
}
