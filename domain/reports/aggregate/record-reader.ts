// One <record> at a time (RFC 7489 Appendix C RecordType): its values as they are read, and the
// checks when it closes. Required elements must be present; source_ip and count also need a value.
// An auth result's domain and result are not required (kept as '' when absent).

import { formatIp, isIpv4, parseIp, unmapIpv4 } from '../../spf/ip.ts'
import type {
  AggregateParseError,
  AggregateRecord,
  AuthDkim,
  AuthSpf,
  PolicyOverrideReason,
} from '../aggregate-types.ts'
import { AUTH_DKIM, AUTH_SPF, EVALUATED, IDENTIFIERS, REASON, RECORD, ROW } from './report-contexts.ts'
import { lower, MAX_REPEATED, optional, optionalLower } from './report-fields.ts'
import { integerValue, textValue, type XmlText } from './xml-text.ts'

/** The largest count one row may carry: aggregate_records.count is a 32-bit integer. */
const MAX_COUNT = 2_147_483_647

const HAS_SOURCE_IP = 1
const HAS_COUNT = 2
const HAS_DISPOSITION = 4
const HAS_HEADER_FROM = 8

/**
 * Checks the source IP and rewrites it in canonical form (RFC 5952 for IPv6), so the same address
 * written two ways is one source. A strict dotted quad is already canonical (the common case). An
 * IPv4-mapped address (`::ffff:1.2.3.4`, RFC 4291 §2.5.5.2) is that IPv4 sender, as failure reports
 * already read it (../forensic.ts normalizeIp) and SPF must treat it (RFC 7208 §5).
 */
function canonicalSourceIp(record: AggregateRecord): boolean {
  if (isIpv4(record.sourceIp)) return true
  const ip = parseIp(record.sourceIp)
  if (ip === null) return false
  record.sourceIp = formatIp(unmapIpv4(ip))
  return true
}

const newRecord = (): AggregateRecord => ({
  sourceIp: '',
  count: 0,
  disposition: '',
  dkimEvaluated: null,
  spfEvaluated: null,
  reasons: [],
  headerFrom: '',
  envelopeFrom: null,
  envelopeTo: null,
  dkim: [],
  spf: [],
})

export interface RecordReader {
  /** The record being read; a new object for each <record>, handed out when it closes. */
  readonly record: AggregateRecord
  /** A structural element of a record opened (RECORD, REASON, AUTH_DKIM, AUTH_SPF). */
  open(context: number): AggregateParseError | null
  /** A value element closed inside `parent`. */
  value(parent: number, name: string, text: XmlText): AggregateParseError | null
  /** A structural element closed: its checks. */
  close(context: number): AggregateParseError | null
}

export function createRecordReader(): RecordReader {
  let record = newRecord()
  let number = 0
  let bits = 0
  let reason: PolicyOverrideReason = { type: '', comment: null }
  let dkim: AuthDkim = { domain: '', selector: null, result: '', humanResult: null }
  let spf: AuthSpf = { domain: '', scope: null, result: '' }

  const missing = (what: string): AggregateParseError => ({
    code: 'missing_field',
    message: `record ${number}: ${what} is missing`,
  })
  const tooMany = (what: string): AggregateParseError => ({
    code: 'limit_exceeded',
    message: `record ${number}: more than ${MAX_REPEATED} ${what} elements`,
  })

  return {
    get record() {
      return record
    },
    open(context) {
      if (context === RECORD) {
        record = newRecord()
        number++
        bits = 0
      } else if (context === AUTH_DKIM) {
        if (record.dkim.length >= MAX_REPEATED) return tooMany('auth_results/dkim')
        dkim = { domain: '', selector: null, result: '', humanResult: null }
        record.dkim.push(dkim)
      } else if (context === AUTH_SPF) {
        if (record.spf.length >= MAX_REPEATED) return tooMany('auth_results/spf')
        spf = { domain: '', scope: null, result: '' }
        record.spf.push(spf)
      } else if (context === REASON) {
        if (record.reasons.length >= MAX_REPEATED) return tooMany('row/policy_evaluated/reason')
        reason = { type: '', comment: null }
        record.reasons.push(reason)
      }
      return null
    },
    value(parent, name, text) {
      switch (parent) {
        case ROW:
          if (name === 'source_ip') {
            record.sourceIp = textValue(text)
            if (record.sourceIp !== '') bits |= HAS_SOURCE_IP
          } else if (name === 'count') {
            // RFC 7489 Appendix C: xs:integer; a message count cannot be negative. Nor can one row
            // stand for more than 2^31 - 1 messages (the stored column, aggregate_records.count, is
            // a 32-bit integer, and no reporter sends a day's mail of one source anywhere near it).
            record.count = integerValue(text)
            if (record.count < 0 || record.count > MAX_COUNT) {
              const message = `record ${number}: row/count ${JSON.stringify(textValue(text))} is not an integer from 0 to ${MAX_COUNT}`
              return { code: 'invalid_value', message }
            }
            bits |= HAS_COUNT
          }
          break
        case EVALUATED:
          if (name === 'disposition') {
            record.disposition = lower(text)
            bits |= HAS_DISPOSITION
          } else if (name === 'dkim') record.dkimEvaluated = optionalLower(text)
          else if (name === 'spf') record.spfEvaluated = optionalLower(text)
          break
        case REASON:
          if (name === 'type') reason.type = lower(text)
          else if (name === 'comment') reason.comment = optional(text)
          break
        case IDENTIFIERS:
          if (name === 'header_from') {
            record.headerFrom = lower(text)
            bits |= HAS_HEADER_FROM
          } else if (name === 'envelope_from') record.envelopeFrom = optionalLower(text)
          else if (name === 'envelope_to') record.envelopeTo = optionalLower(text)
          break
        case AUTH_DKIM:
          if (name === 'domain') dkim.domain = lower(text)
          else if (name === 'result') dkim.result = lower(text)
          else if (name === 'selector') dkim.selector = optional(text)
          else if (name === 'human_result') dkim.humanResult = optional(text)
          break
        case AUTH_SPF:
          if (name === 'domain') spf.domain = lower(text)
          else if (name === 'result') spf.result = lower(text)
          else if (name === 'scope') spf.scope = optionalLower(text)
          break
      }
      return null
    },
    close(context) {
      switch (context) {
        case RECORD:
          if ((bits & HAS_SOURCE_IP) === 0) return missing('row/source_ip')
          if (!canonicalSourceIp(record)) {
            const message = `record ${number}: row/source_ip ${JSON.stringify(record.sourceIp)} is not an IP address`
            return { code: 'invalid_value', message }
          }
          if ((bits & HAS_COUNT) === 0) return missing('row/count')
          if ((bits & HAS_DISPOSITION) === 0) return missing('row/policy_evaluated/disposition')
          if ((bits & HAS_HEADER_FROM) === 0) return missing('identifiers/header_from')
          return null
        case REASON:
          // An empty <reason> (parsedmarc empty_reason.xml) says nothing: it is not kept.
          if (reason.type === '' && reason.comment === null) record.reasons.pop()
          return null
        case AUTH_DKIM:
        case AUTH_SPF:
          // An auth result without its domain or result is kept with '' (as an empty element is):
          // it cannot count as an aligned pass, and the report's other records stay. parsedmarc
          // accepts such reports too (issue #17: refused reports other tools read).
          return null
        default:
          return null
      }
    },
  }
}
