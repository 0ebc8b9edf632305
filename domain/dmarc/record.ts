import type { Finding, Severity } from '../shared/finding.ts'
import { parseReportUriList, type ReportUri } from './report-uri.ts'

// The DMARC Policy Record: RFC 9989 §4.7 (tags) and §4.8 (ABNF), with the RFC 7489 §6.3 tags that
// RFC 9989 removed (pct, rf, ri) still read, because records in the wild carry them and RFC 7489
// receivers still act on them.

export type DmarcRecordCode =
  | 'empty_record'
  | 'not_dmarc'
  | 'invalid_version'
  | 'version_not_first'
  | 'leading_whitespace'
  | 'invalid_tag_syntax'
  | 'duplicate_tag'
  | 'unknown_tag'
  | 'missing_policy'
  | 'invalid_policy'
  | 'invalid_subdomain_policy'
  | 'invalid_nonexistent_policy'
  | 'invalid_alignment_mode'
  | 'invalid_uri'
  | 'unsupported_uri_scheme'
  | 'size_limit_historic'
  | 'no_aggregate_reports'
  | 'invalid_failure_options'
  | 'fo_without_ruf'
  | 'invalid_testing_flag'
  | 'testing_mode'
  | 'invalid_psd'
  | 'pct_historic'
  | 'invalid_pct'
  | 'rf_historic'
  | 'ri_historic'

export type DmarcFinding = Finding<DmarcRecordCode>

export type DmarcPolicy = 'none' | 'quarantine' | 'reject'
export type AlignmentMode = 'r' | 's'
export type FailureOption = '0' | '1' | 'd' | 's'
export type PsdFlag = 'y' | 'n' | 'u'

export interface DmarcRecord {
  raw: string
  /** Values as published when valid, null when absent or invalid. */
  p: DmarcPolicy | null
  sp: DmarcPolicy | null
  np: DmarcPolicy | null
  /**
   * What a receiver applies (RFC 9989 §4.7, §4.10.1): sp falls back to p, np to sp then p, and a
   * record with a missing or invalid p, sp or np but a usable rua is treated as p=none throughout.
   */
  effective: { p: DmarcPolicy; sp: DmarcPolicy; np: DmarcPolicy }
  adkim: AlignmentMode
  aspf: AlignmentMode
  rua: ReportUri[]
  ruf: ReportUri[]
  fo: FailureOption[]
  /** RFC 9989 t=y: the owner is testing; receivers apply one level below the policy. */
  testing: boolean
  psd: PsdFlag
  /** Historic RFC 7489 tags, null when absent or invalid. */
  pct: number | null
  rf: string[] | null
  ri: number | null
  /** Every tag as published (first occurrence), names lower-cased. */
  tags: Record<string, string>
}

export type DmarcParseResult =
  | { ok: true; record: DmarcRecord; findings: DmarcFinding[] }
  /** `tags` is null when the text is not a DMARC record at all (no leading v=DMARC1). */
  | { ok: false; findings: DmarcFinding[]; tags: Record<string, string> | null }

const POLICIES: readonly string[] = ['none', 'quarantine', 'reject']
const POLICY_TAGS = [
  ['p', 'invalid_policy'],
  ['sp', 'invalid_subdomain_policy'],
  ['np', 'invalid_nonexistent_policy'],
] as const
// RFC 9989 §4.7 tags, plus the RFC 7489 §6.3 ones RFC 9989 removed.
const KNOWN_TAGS = new Set('v p sp np adkim aspf rua ruf fo t psd pct rf ri'.split(' '))
// RFC 9989 §4.8: dmarc-version = "v" equals %s"DMARC1" - the tag name is case-insensitive, the value is not.
const VERSION = /^[ \t]*[vV][ \t]*=[ \t]*DMARC1[ \t]*(?:;|$)/
const TAG_NAME = /^[a-z]+$/i

/** Whether a TXT string is a DMARC record in the sense of RFC 9989 §4.10 steps 2 and 6. */
export function isDmarcRecordText(txt: string): boolean {
  return VERSION.test(txt)
}

export function parseDmarcRecord(txt: string): DmarcParseResult {
  const findings: DmarcFinding[] = []
  const add = (code: DmarcRecordCode, severity: Severity, message: string) =>
    findings.push({ code, severity, message })
  const fail = (tags: Record<string, string> | null): DmarcParseResult => ({ ok: false, findings, tags })

  if (txt.trim() === '') {
    add('empty_record', 'critical', 'The record is empty.')
    return fail(null)
  }
  const segments = txt.split(';').map((segment) => segment.trim())
  const version = /^v\s*=\s*(dmarc.*)$/i.exec(segments[0] ?? '')
  if (version === null) {
    if (segments.some((segment) => /^v\s*=\s*DMARC1$/i.test(segment))) {
      add('version_not_first', 'critical', 'v=DMARC1 must be the first tag; receivers ignore this record.')
    } else add('not_dmarc', 'critical', 'The record does not start with v=DMARC1.')
    return fail(null)
  }
  if (version[1] !== 'DMARC1') {
    const hint = version[1]?.toUpperCase() === 'DMARC1' ? ' The value is case-sensitive: write DMARC1.' : ''
    add('invalid_version', 'critical', `The version must be exactly DMARC1, not "${version[1]}".${hint}`)
    return fail(null)
  }
  // RFC 9989 §4.8 has no whitespace before the v tag; most receivers trim it, strict ones do not.
  if (/^\s/.test(txt)) add('leading_whitespace', 'low', 'The record starts with whitespace before v=DMARC1.')

  const tags: Record<string, string> = {}
  for (const segment of segments.slice(1)) {
    if (segment === '') continue
    const eq = segment.indexOf('=')
    const name = eq < 0 ? '' : segment.slice(0, eq).trim().toLowerCase()
    if (!TAG_NAME.test(name)) {
      add('invalid_tag_syntax', 'medium', `"${segment}" is not a tag=value pair; receivers ignore it.`)
      continue
    }
    if (name in tags || name === 'v') {
      // RFC 9989 §4.7 uses the DKIM tag-list syntax, and RFC 6376 §3.2 makes a list with a
      // repeated tag invalid as a whole, so some receivers drop the record; we keep the first.
      add(
        'duplicate_tag',
        'high',
        `The tag "${name}" appears more than once; some receivers reject the record.`,
      )
      continue
    }
    tags[name] = segment.slice(eq + 1).trim()
    if (!KNOWN_TAGS.has(name)) {
      add('unknown_tag', 'low', `The tag "${name}" is not a DMARC tag; receivers ignore it (RFC 9989 §4.7).`)
    }
  }

  const rua = readUris(tags, 'rua', add)
  const ruf = readUris(tags, 'ruf', add)
  const hasRua = rua.length > 0
  const consequence = hasRua
    ? 'Receivers treat the record as p=none because it has a valid rua (RFC 9989 §4.10.1).'
    : 'Without a valid rua either, receivers apply no DMARC processing (RFC 9989 §4.10.1).'
  const severity: Severity = hasRua ? 'medium' : 'high'
  const p = readPolicy(tags.p)
  const sp = readPolicy(tags.sp)
  const np = readPolicy(tags.np)
  if (tags.p === undefined) add('missing_policy', severity, `The record has no p tag. ${consequence}`)
  for (const [tag, code] of POLICY_TAGS) {
    const value = tags[tag]
    if (value !== undefined && readPolicy(value) === null) {
      add(code, severity, `${tag}="${value}" is not none, quarantine or reject. ${consequence}`)
    }
  }
  const policyUsable =
    p !== null && (tags.sp === undefined || sp !== null) && (tags.np === undefined || np !== null)
  if (!policyUsable && !hasRua) return fail(tags)
  if (!hasRua) {
    const what = tags.rua === undefined ? 'No rua tag' : 'No valid rua URI'
    add('no_aggregate_reports', 'medium', `${what}: receivers send no aggregate reports (RFC 9989 §4.7).`)
  }

  const effectiveP = policyUsable ? p : 'none'
  const effectiveSp = policyUsable ? (sp ?? p) : 'none'
  const effectiveNp = policyUsable ? (np ?? sp ?? p) : 'none'
  const testing = readFlag(tags, 't', ['y', 'n'], 'n', add, 'invalid_testing_flag') === 'y'
  if (testing) {
    add('testing_mode', 'low', 't=y: receivers apply one level below the published policy (RFC 9989 §4.7).')
  }
  const record: DmarcRecord = {
    raw: txt,
    p,
    sp,
    np,
    effective: { p: effectiveP, sp: effectiveSp, np: effectiveNp },
    adkim: readFlag(tags, 'adkim', ['r', 's'], 'r', add, 'invalid_alignment_mode') as AlignmentMode,
    aspf: readFlag(tags, 'aspf', ['r', 's'], 'r', add, 'invalid_alignment_mode') as AlignmentMode,
    rua,
    ruf,
    fo: readFailureOptions(tags, ruf.length > 0, add),
    testing,
    psd: readFlag(tags, 'psd', ['y', 'n', 'u'], 'u', add, 'invalid_psd') as PsdFlag,
    ...readHistoric(tags, add),
    tags,
  }
  return { ok: true, record, findings }
}

type Add = (code: DmarcRecordCode, severity: Severity, message: string) => void

function readPolicy(value: string | undefined): DmarcPolicy | null {
  const lower = value?.toLowerCase()
  return lower !== undefined && POLICIES.includes(lower) ? (lower as DmarcPolicy) : null
}

function readFlag(
  tags: Record<string, string>,
  tag: string,
  allowed: readonly string[],
  fallback: string,
  add: Add,
  code: DmarcRecordCode,
): string {
  const value = tags[tag]
  if (value === undefined) return fallback
  // RFC 5234 quoted strings are case-insensitive, so "S" is as good as "s".
  const lower = value.toLowerCase()
  if (allowed.includes(lower)) return lower
  add(
    code,
    'low',
    `${tag}="${value}" is not one of ${allowed.join(', ')}; receivers use the default "${fallback}".`,
  )
  return fallback
}

function readUris(tags: Record<string, string>, tag: 'rua' | 'ruf', add: Add): ReportUri[] {
  const value = tags[tag]
  if (value === undefined) return []
  const list = parseReportUriList(value)
  for (const problem of list.problems) add('invalid_uri', 'medium', `${tag}: ${problem.reason}`)
  for (const uri of list.uris) {
    if (uri.scheme !== 'mailto') {
      // RFC 9989 §4.7: receivers MUST support mailto and MUST ignore schemes they do not support.
      add(
        'unsupported_uri_scheme',
        'low',
        `${tag}: "${uri.uri}" is not mailto:, which most receivers ignore.`,
      )
    }
  }
  if (list.usesSizeLimit) {
    add(
      'size_limit_historic',
      'low',
      `${tag}: the "!size" suffix comes from RFC 7489 §6.2; RFC 9989 §4.8 requires "!" to be percent-encoded, so newer receivers may read it as part of the address.`,
    )
  }
  return list.uris
}

function readFailureOptions(tags: Record<string, string>, hasRuf: boolean, add: Add): FailureOption[] {
  const value = tags.fo
  if (value === undefined) return ['0']
  if (!hasRuf) add('fo_without_ruf', 'info', 'fo is ignored because there is no valid ruf (RFC 9989 §4.7).')
  const options: FailureOption[] = []
  for (const part of value.split(':')) {
    const option = part.trim().toLowerCase()
    if (option === '0' || option === '1' || option === 'd' || option === 's') {
      if (!options.includes(option)) options.push(option)
    } else add('invalid_failure_options', 'low', `fo: "${part.trim()}" is not one of 0, 1, d, s.`)
  }
  return options.length > 0 ? options : ['0']
}

function readHistoric(tags: Record<string, string>, add: Add): Pick<DmarcRecord, 'pct' | 'rf' | 'ri'> {
  let pct: number | null = null
  if (tags.pct !== undefined) {
    const value = /^\d{1,3}$/.test(tags.pct) ? Number(tags.pct) : Number.NaN
    if (value >= 0 && value <= 100) {
      pct = value
      const partial =
        value < 100
          ? ` RFC 7489 receivers apply the policy to only ${value}% of failing mail, RFC 9989 receivers to all of it.`
          : ''
      add(
        'pct_historic',
        value < 100 ? 'medium' : 'low',
        `pct was removed by RFC 9989 (use t=y to test a policy).${partial}`,
      )
    } else add('invalid_pct', 'low', `pct="${tags.pct}" is not an integer from 0 to 100.`)
  }
  let rf: string[] | null = null
  if (tags.rf !== undefined) {
    rf = tags.rf.split(':').map((format) => format.trim().toLowerCase())
    add('rf_historic', 'info', 'rf was removed by RFC 9989; failure reports are always AFRF (RFC 9991).')
  }
  let ri: number | null = null
  if (tags.ri !== undefined) {
    ri = /^\d{1,10}$/.test(tags.ri) ? Number(tags.ri) : null
    add(
      'ri_historic',
      'info',
      'ri was removed by RFC 9989; aggregate reports are sent about daily (RFC 9990).',
    )
  }
  return { pct, rf, ri }
}
