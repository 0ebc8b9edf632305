import type { DmarcRecord } from '../dmarc/record.ts'
import type { DnsResolver } from '../dns/ports.ts'
import type { Finding, Severity } from '../shared/finding.ts'
import { lookupVersionedRecord } from './versioned-record.ts'

// BIMI assertion records (draft-brand-indicators-for-message-identification §4): TXT at
// `<selector>._bimi.<domain>`, selector "default", in the DKIM tag-value syntax. Fetching and
// validating the SVG and the mark certificate is I/O and belongs to infrastructure.

export type BimiCode =
  | 'no_record'
  | 'multiple_records'
  | 'lookup_failed'
  | 'not_bimi'
  | 'invalid_version'
  | 'invalid_tag_syntax'
  | 'duplicate_tag'
  | 'unknown_tag'
  | 'missing_location'
  | 'invalid_location'
  | 'insecure_location'
  | 'location_not_svg'
  | 'invalid_evidence'
  | 'insecure_evidence'
  | 'no_evidence'
  | 'declined'
  | 'dmarc_not_enforced'
  | 'dmarc_subdomains_not_enforced'
  | 'dmarc_pct_below_100'
  | 'dmarc_testing'

export type BimiFinding = Finding<BimiCode>

export interface BimiRecord {
  raw: string
  /** l=: the HTTPS location of the SVG Tiny PS logo; null when empty. */
  location: string | null
  /** a=: the HTTPS location of the VMC/CMC (PEM); null when absent or empty. */
  evidence: string | null
  /** Both l= and a= empty: the domain declines to publish a logo. */
  declined: boolean
  tags: Record<string, string>
}

export type BimiParse =
  | { ok: true; record: BimiRecord; findings: BimiFinding[] }
  | { ok: false; findings: BimiFinding[] }

export type BimiLookup =
  | { status: 'found'; name: string; record: BimiRecord; findings: BimiFinding[] }
  | { status: 'none' | 'invalid' | 'temperror'; name: string; record: null; findings: BimiFinding[] }

const KNOWN_TAGS = new Set(['v', 'l', 'a', 'avp'])

export function parseBimiRecord(txt: string): BimiParse {
  const findings: BimiFinding[] = []
  const add = (code: BimiCode, severity: Severity, message: string) =>
    findings.push({ code, severity, message })
  const fail = (code: BimiCode, message: string): BimiParse => {
    add(code, 'high', message)
    return { ok: false, findings }
  }
  const tags: Record<string, string> = {}
  const order: string[] = []
  for (const segment of txt.split(';')) {
    const trimmed = segment.trim()
    if (trimmed === '') continue
    const eq = trimmed.indexOf('=')
    const name = eq < 0 ? '' : trimmed.slice(0, eq).trim()
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name))
      return fail('invalid_tag_syntax', `"${trimmed}" is not a tag=value pair.`)
    // The DKIM tag-list rules (RFC 6376 §3.2) apply: a repeated tag invalidates the record.
    if (name in tags) return fail('duplicate_tag', `The tag "${name}" appears more than once.`)
    tags[name] = trimmed.slice(eq + 1).trim()
    order.push(name)
    if (!KNOWN_TAGS.has(name))
      add('unknown_tag', 'info', `The tag "${name}" is not a BIMI tag; it is ignored.`)
  }
  // The v tag MUST be first and MUST be exactly "BIMI1"; otherwise the record is ignored.
  if (order[0] !== 'v') return fail('not_bimi', 'The record does not start with v=BIMI1.')
  if (tags.v !== 'BIMI1') return fail('invalid_version', `v="${tags.v}" is not BIMI1.`)
  if (tags.l === undefined) return fail('missing_location', 'The record has no l= tag, which is required.')

  const location = readHttpsUri(tags.l, 'l', add)
  const evidence = tags.a === undefined ? null : readHttpsUri(tags.a, 'a', add)
  if (location === undefined || evidence === undefined) return { ok: false, findings }
  const declined = location === null && evidence === null
  if (declined) add('declined', 'info', 'l= and a= are empty: the domain declines to publish a BIMI logo.')
  else {
    if (location !== null && !/\.svg$/i.test(new URL(location).pathname)) {
      add('location_not_svg', 'low', `l=${location} does not name an .svg file; BIMI logos are SVG Tiny PS.`)
    }
    if (evidence === null) {
      add(
        'no_evidence',
        'medium',
        'No a= mark certificate: Gmail and Apple Mail show no logo without a VMC or CMC.',
      )
    }
  }
  return { ok: true, record: { raw: txt, location, evidence, declined, tags }, findings }
}

/** null for an empty value, undefined when invalid (findings added). */
function readHttpsUri(
  value: string,
  tag: 'l' | 'a',
  add: (code: BimiCode, severity: Severity, message: string) => void,
): string | null | undefined {
  if (value === '') return null
  const what = tag === 'l' ? 'location' : 'evidence'
  if (value.includes(',')) {
    add(`invalid_${what}`, 'high', `${tag}= must be a single URI, not a list.`)
    return undefined
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    add(`invalid_${what}`, 'high', `${tag}=${value} is not a URI.`)
    return undefined
  }
  // BIMI requires HTTPS with a fully qualified host for both the logo and the evidence document.
  if (url.protocol !== 'https:' || !url.hostname.includes('.')) {
    add(`insecure_${what}`, 'high', `${tag}=${value} must be an https:// URL with a fully qualified host.`)
    return undefined
  }
  return value
}

/**
 * BIMI applies only to mail under DMARC enforcement: p (and sp, for subdomains) at quarantine or
 * reject, applied to all failing mail - pct=100 where the historic pct tag is present, and not in
 * RFC 9989 testing mode (t=y), which makes receivers apply a policy one level lower.
 */
export function checkBimiDmarcRequirements(record: DmarcRecord): {
  eligible: boolean
  findings: BimiFinding[]
} {
  const findings: BimiFinding[] = []
  const { p, sp } = record.effective
  if (p === 'none') {
    findings.push({
      code: 'dmarc_not_enforced',
      severity: 'high',
      message: 'BIMI needs DMARC p=quarantine or p=reject.',
    })
  }
  if (p !== 'none' && sp === 'none') {
    findings.push({
      code: 'dmarc_subdomains_not_enforced',
      severity: 'high',
      message: 'BIMI needs subdomains under enforcement too; sp=none disqualifies the domain.',
    })
  }
  if (record.pct !== null && record.pct < 100) {
    findings.push({
      code: 'dmarc_pct_below_100',
      severity: 'high',
      message: `pct=${record.pct}: BIMI needs the policy applied to all failing mail (pct=100 or no pct).`,
    })
  }
  if (record.testing) {
    findings.push({
      code: 'dmarc_testing',
      severity: 'high',
      message: 't=y: the DMARC policy is in testing mode, which BIMI does not accept as enforcement.',
    })
  }
  return { eligible: findings.length === 0, findings }
}

/** Looks up `<selector>._bimi.<domain>`, falling back to the Organizational Domain when given. */
export async function lookupBimi(
  deps: { dns: DnsResolver },
  input: { domain: string; organizationalDomain?: string; selector?: string },
): Promise<BimiLookup> {
  const selector = input.selector ?? 'default'
  const first = await lookupAt(deps.dns, `${selector}._bimi.${input.domain}`)
  const org = input.organizationalDomain
  if (first.status !== 'none' || org === undefined || org === input.domain) return first
  return lookupAt(deps.dns, `${selector}._bimi.${org}`)
}

function lookupAt(dns: DnsResolver, name: string): Promise<BimiLookup> {
  return lookupVersionedRecord(dns, name, {
    label: 'BIMI',
    isRecord: (text) => /^\s*v\s*=\s*BIMI1/i.test(text),
    parse: parseBimiRecord,
    noRecordSeverity: 'info',
    multipleConsequence: 'receivers ignore them all',
  })
}
