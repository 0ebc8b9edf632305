import type { DnsResolver } from '../dns/ports.ts'
import type { Finding, Severity } from '../shared/finding.ts'
import { lookupVersionedRecord, trimWsp } from './versioned-record.ts'

// MTA-STS (RFC 8461): the `_mta-sts` TXT record (§3.1) and the policy file (§3.2). Fetching
// https://mta-sts.<domain>/.well-known/mta-sts.txt is I/O and belongs to infrastructure; this
// module only judges the text it gets.

export type MtaStsCode =
  | 'no_record'
  | 'multiple_records'
  | 'lookup_failed'
  | 'not_mta_sts'
  | 'invalid_field'
  | 'missing_id'
  | 'invalid_id'
  | 'malformed_line'
  | 'duplicate_field'
  | 'missing_version'
  | 'invalid_version'
  | 'missing_mode'
  | 'invalid_mode'
  | 'missing_max_age'
  | 'invalid_max_age'
  | 'max_age_above_limit'
  | 'max_age_short'
  | 'missing_mx'
  | 'invalid_mx'
  | 'mode_testing'
  | 'mode_none'
  | 'mx_not_covered'

export type MtaStsFinding = Finding<MtaStsCode>

export interface MtaStsRecord {
  raw: string
  id: string
  extensions: Record<string, string>
}

export type MtaStsMode = 'enforce' | 'testing' | 'none'

export interface MtaStsPolicy {
  version: 'STSv1'
  mode: MtaStsMode
  mx: string[]
  /** Seconds, capped at the RFC 8461 §3.2 maximum of 31557600. */
  maxAge: number
  extensions: Record<string, string>
}

export type MtaStsRecordParse =
  | { ok: true; record: MtaStsRecord; findings: MtaStsFinding[] }
  | { ok: false; findings: MtaStsFinding[] }

export type MtaStsPolicyParse =
  | { ok: true; policy: MtaStsPolicy; findings: MtaStsFinding[] }
  | { ok: false; findings: MtaStsFinding[] }

export type MtaStsLookup =
  | { status: 'found'; name: string; record: MtaStsRecord; findings: MtaStsFinding[] }
  | { status: 'none' | 'invalid' | 'temperror'; name: string; record: null; findings: MtaStsFinding[] }

const MAX_AGE_LIMIT = 31557600
const ONE_DAY = 86400
// RFC 8461 §3.1 / §3.2: ext-name = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")
const EXT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/
const TXT_EXT_VALUE = /^[\x21-\x3a\x3c\x3e-\x7e]+$/
const POLICY_EXT_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/
// RFC 8461 §3.2: sts-policy-mx-value = ["*."] Domain (RFC 5321 §4.1.2)
const MX_PATTERN = /^(\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i

export const mtaStsPolicyUrl = (domain: string) => `https://mta-sts.${domain}/.well-known/mta-sts.txt`

export function parseMtaStsRecord(txt: string): MtaStsRecordParse {
  const findings: MtaStsFinding[] = []
  const fail = (code: MtaStsCode, message: string): MtaStsRecordParse => {
    findings.push({ code, severity: 'high', message })
    return { ok: false, findings }
  }
  // RFC 8461 §3.1: sts-version = %s"v=STSv1", case-sensitive and without spaces around "=".
  if (!/^v=STSv1[ \t]*;/.test(txt)) return fail('not_mta_sts', 'The record does not begin with "v=STSv1;".')
  let id: string | null = null
  const extensions: Record<string, string> = {}
  const fields = txt.split(';').slice(1)
  for (const [index, raw] of fields.entries()) {
    const field = trimWsp(raw)
    if (field === '' && index === fields.length - 1) continue
    const eq = field.indexOf('=')
    const name = field.slice(0, Math.max(eq, 0))
    const value = field.slice(eq + 1)
    if (name === 'id') {
      if (!/^[A-Za-z0-9]{1,32}$/.test(value))
        return fail('invalid_id', `id="${value}" must be 1-32 letters or digits.`)
      id ??= value
    } else if (eq < 0 || !EXT_NAME.test(name) || !TXT_EXT_VALUE.test(value)) {
      return fail('invalid_field', `"${field}" is not a valid field of an MTA-STS record.`)
    } else extensions[name] ??= value
  }
  if (id === null) return fail('missing_id', 'The record has no id field, which is required.')
  return { ok: true, record: { raw: txt, id, extensions }, findings }
}

export function lookupMtaStsRecord(deps: { dns: DnsResolver }, domain: string): Promise<MtaStsLookup> {
  // RFC 8461 §3.1: records not beginning with "v=STSv1;" are discarded.
  return lookupVersionedRecord(deps.dns, `_mta-sts.${domain}`, {
    label: 'MTA-STS',
    isRecord: (text) => text.startsWith('v=STSv1'),
    isNearMiss: (text) => /^\s*v\s*=\s*stsv1/i.test(text),
    parse: parseMtaStsRecord,
    noRecordSeverity: 'medium',
    multipleConsequence: 'senders treat that as no policy',
  })
}

export function parseMtaStsPolicy(text: string): MtaStsPolicyParse {
  const findings: MtaStsFinding[] = []
  const add = (code: MtaStsCode, severity: Severity, message: string) =>
    findings.push({ code, severity, message })
  const fields = new Map<string, string>()
  const mx: string[] = []
  const extensions: Record<string, string> = {}
  // RFC 8461 §3.2: sts-policy-term = LF / CRLF; a UTF-8 byte-order mark is not part of the grammar.
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  for (const [index, line] of lines.entries()) {
    // Split at the first colon without a regex: `^([^:]*):[ \t]*(.*?)[ \t]*$` backtracked
    // cubically over blanks before a lone CR (a 64 KB policy of any domain the scanner is asked about).
    const colon = line.indexOf(':')
    const key = colon < 0 ? '' : line.slice(0, colon)
    const value = colon < 0 ? '' : trimWsp(line.slice(colon + 1))
    if (colon < 0 || !EXT_NAME.test(key) || !POLICY_EXT_VALUE.test(value)) {
      add(
        'malformed_line',
        'medium',
        `Line ${index + 1} ("${line.slice(0, 80)}") is not a "key: value" field.`,
      )
      continue
    }
    if (key === 'mx') mx.push(value)
    else if (fields.has(key)) {
      add('duplicate_field', 'low', `"${key}" appears more than once; senders use the first one.`)
    } else {
      fields.set(key, value)
      if (!['version', 'mode', 'max_age'].includes(key)) extensions[key] = value
    }
  }

  const version = fields.get('version')
  if (version === undefined) add('missing_version', 'high', 'The policy has no "version: STSv1" field.')
  else if (version !== 'STSv1') add('invalid_version', 'high', `version "${version}" is not STSv1.`)
  const mode = fields.get('mode')
  if (mode === undefined) add('missing_mode', 'high', 'The policy has no mode field.')
  else if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') {
    add('invalid_mode', 'high', `mode "${mode}" is not enforce, testing or none.`)
  }
  const maxAgeText = fields.get('max_age')
  let maxAge = 0
  if (maxAgeText === undefined) add('missing_max_age', 'high', 'The policy has no max_age field.')
  else if (!/^\d{1,10}$/.test(maxAgeText))
    add('invalid_max_age', 'high', `max_age "${maxAgeText}" is not a number.`)
  else {
    maxAge = Number(maxAgeText)
    if (maxAge > MAX_AGE_LIMIT) {
      add(
        'max_age_above_limit',
        'low',
        `max_age ${maxAge} exceeds the maximum of ${MAX_AGE_LIMIT} (one year).`,
      )
      maxAge = MAX_AGE_LIMIT
    } else if (maxAge < ONE_DAY) {
      // RFC 8461 §3.2: a short max_age shrinks the protection against a downgrade at refresh time.
      add('max_age_short', 'low', `max_age ${maxAge} is under a day; weeks or more are expected.`)
    }
  }
  const patterns = mx.map((pattern) => pattern.toLowerCase().replace(/\.$/, ''))
  for (const pattern of patterns) {
    if (!MX_PATTERN.test(pattern))
      add('invalid_mx', 'high', `mx "${pattern}" is not a host name or *.domain pattern.`)
  }
  if (patterns.length === 0 && mode !== 'none') {
    add('missing_mx', 'high', 'The policy lists no mx patterns, so no MX host can match it.')
  }
  const valid = !findings.some((finding) => finding.severity === 'high')
  if (!valid || (mode !== 'enforce' && mode !== 'testing' && mode !== 'none')) return { ok: false, findings }
  if (mode === 'testing')
    add('mode_testing', 'low', 'mode is testing: failures are reported but mail is delivered.')
  if (mode === 'none')
    add('mode_none', 'medium', 'mode is none: the domain has withdrawn its MTA-STS policy.')
  return { ok: true, policy: { version: 'STSv1', mode, mx: patterns, maxAge, extensions }, findings }
}

/** RFC 8461 §4.1: an exact host, or "*." matching exactly one left-most label. Case-insensitive. */
export function mxMatchesPattern(host: string, pattern: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '')
  const target = pattern.toLowerCase().replace(/\.$/, '')
  if (!target.startsWith('*.')) return name === target
  const dot = name.indexOf('.')
  return dot > 0 && name.slice(dot + 1) === target.slice(2)
}

/** Judges a fetched policy file and, given the domain's MX hosts, whether each is covered. */
export function assessMtaStsPolicy(input: {
  policyText: string
  mxHosts?: readonly string[]
}): MtaStsPolicyParse {
  const parsed = parseMtaStsPolicy(input.policyText)
  if (!parsed.ok || input.mxHosts === undefined || parsed.policy.mode === 'none') return parsed
  const { policy } = parsed
  for (const host of input.mxHosts) {
    if (policy.mx.some((pattern) => mxMatchesPattern(host, pattern))) continue
    parsed.findings.push({
      code: 'mx_not_covered',
      severity: policy.mode === 'enforce' ? 'high' : 'medium',
      message:
        policy.mode === 'enforce'
          ? `MX ${host} matches no mx pattern; compliant senders refuse to deliver to it.`
          : `MX ${host} matches no mx pattern; senders report failures for it.`,
    })
  }
  return parsed
}
