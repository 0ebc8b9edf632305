import { getDomain } from 'tldts'
import type { DnsAnswer, DnsResolver } from '../dns/ports.ts'
import { txtValues } from '../dns/txt.ts'
import type { Finding } from '../shared/finding.ts'
import {
  type DmarcFinding,
  type DmarcPolicy,
  type DmarcRecord,
  isDmarcRecordText,
  parseDmarcRecord,
} from './record.ts'

// DMARC policy discovery (RFC 9989 §4.10.1) over the DNS Tree Walk (RFC 9989 §4.10), with the
// Organizational Domain chosen as in RFC 9989 §4.10.2.

export interface DmarcDiscoveryDeps {
  dns: DnsResolver
}

export type DmarcDiscoveryCode =
  | 'no_dmarc_record'
  | 'multiple_records'
  | 'record_ignored'
  | 'dns_temperror'
  | 'inherited_policy'
  | 'psd_policy_applies'
  | 'policy_record_unusable'
  | 'org_domain_differs_from_psl'
  | 'public_suffix_fallback'

export type DmarcDiscoveryFinding = Finding<DmarcDiscoveryCode>

export type DmarcQueryOutcome = 'record' | 'none' | 'multiple' | 'temperror'

/** One TXT query of the tree walk. */
export interface DmarcQuery {
  /** The domain whose policy was asked for; the query name is `_dmarc.<domain>`. */
  domain: string
  name: string
  outcome: DmarcQueryOutcome
  /** The single DMARC record found, joined (RFC 9989 §4.5). */
  record: string | null
  psd: 'y' | 'n' | 'u' | null
}

export type PolicyRole = 'author_domain' | 'organizational_domain' | 'public_suffix_domain'

export interface AppliedPolicy {
  /** Which tag the policy comes from: p for the domain itself, sp / np for a subdomain (RFC 9989 §4.10.1). */
  tag: 'p' | 'sp' | 'np'
  policy: DmarcPolicy
  /** t=y: receivers apply one level below `policy` (RFC 9989 §4.7). */
  testing: boolean
}

export interface DmarcDiscovery {
  domain: string
  /** The domain whose record applies (the DMARC Policy Domain), null when none applies. */
  policyDomain: string | null
  policyRole: PolicyRole | null
  record: DmarcRecord | null
  rawRecord: string | null
  /** Parser findings of the record that applies. */
  recordFindings: DmarcFinding[]
  appliedPolicy: AppliedPolicy | null
  organizationalDomain: string
  source: 'tree_walk' | 'public_suffix_fallback'
  /** False when an NXDOMAIN for the domain makes np apply; null when not needed or not known. */
  domainExists: boolean | null
  queries: DmarcQuery[]
  /** False when a DNS failure may have hidden a record that would change the answer. */
  complete: boolean
  findings: DmarcDiscoveryFinding[]
}

/**
 * The names a DNS Tree Walk queries, at most 8 (RFC 9989 §4.10): the starting name, then, if it has
 * 8 or more labels, straight to its 7 rightmost ones, then one label fewer each time down to the TLD.
 */
export function treeWalkNames(domain: string): string[] {
  const labels = domain.split('.')
  const names = [domain]
  for (let count = labels.length < 8 ? labels.length - 1 : 7; count >= 1; count--) {
    names.push(labels.slice(labels.length - count).join('.'))
  }
  return names
}

/**
 * RFC 9989 §4.10.2: over the domains whose records the walk found, longest first, the first with
 * psd=n is the Organizational Domain; a psd=y record (other than at the start) makes the name one
 * label below it the Organizational Domain; otherwise the found name with the fewest labels. Null
 * when the walk found no record at all.
 */
export function organizationalDomainFromWalk(start: string, queries: readonly DmarcQuery[]): string | null {
  const found = queries.filter((query) => query.outcome === 'record')
  for (const query of found) {
    if (query.psd === 'n') return query.domain
    if (query.psd === 'y' && query.domain !== start) return oneLabelBelow(start, query.domain)
  }
  return found.at(-1)?.domain ?? null
}

export async function discoverDmarc(deps: DmarcDiscoveryDeps, domain: string): Promise<DmarcDiscovery> {
  const name = domain.trim().toLowerCase().replace(/\.$/, '')
  const findings: DmarcDiscoveryFinding[] = []
  const queries: DmarcQuery[] = []
  for (const target of treeWalkNames(name)) {
    const query = await queryDmarc(deps.dns, target, findings)
    queries.push(query)
    // RFC 9989 §4.10 steps 2 and 6: a single record carrying psd=y or psd=n ends the walk.
    if (query.outcome === 'record' && (query.psd === 'y' || query.psd === 'n')) break
  }

  const walked = organizationalDomainFromWalk(name, queries)
  // RFC 7489 §3.2 receivers still use the Public Suffix List; with nothing found in the DNS it is
  // the only opinion left about the Organizational Domain (RFC 9989 §4.10.2 would say `name`).
  const psl = getDomain(name, { allowPrivateDomains: true }) ?? name
  const organizationalDomain = walked ?? psl
  const source = walked === null ? 'public_suffix_fallback' : 'tree_walk'
  if (walked !== null && walked !== psl) {
    findings.push({
      code: 'org_domain_differs_from_psl',
      severity: 'low',
      message: `The DNS Tree Walk finds ${walked} as the Organizational Domain, the Public Suffix List ${psl}; RFC 7489 receivers may apply a different policy.`,
    })
  }

  const applied = chooseRecord(name, organizationalDomain, queries)
  const complete = !queries.some((query) => query.outcome === 'temperror')
  const result: DmarcDiscovery = {
    domain: name,
    policyDomain: applied?.query.domain ?? null,
    policyRole: applied?.role ?? null,
    record: null,
    rawRecord: applied?.query.record ?? null,
    recordFindings: [],
    appliedPolicy: null,
    organizationalDomain,
    source,
    domainExists: null,
    queries,
    complete,
    findings,
  }
  if (walked === null) {
    findings.push({
      code: 'public_suffix_fallback',
      severity: 'info',
      message: `The DNS Tree Walk found no DMARC record; the Organizational Domain ${psl} comes from the Public Suffix List.`,
    })
  }
  if (applied === null) {
    findings.push({
      code: 'no_dmarc_record',
      severity: 'high',
      message: `No DMARC record applies to ${name}${complete ? '' : ' (some lookups failed)'}; receivers apply no DMARC policy to its mail (RFC 9989 §4.10.1).`,
    })
    return result
  }

  const parsed = parseDmarcRecord(applied.query.record ?? '')
  result.recordFindings = parsed.findings
  let tag: AppliedPolicy['tag'] = 'p'
  if (applied.role !== 'author_domain') {
    // RFC 9989 §4.10.1: sp for an existing subdomain, np for a non-existent one, which RFC 9989
    // §3.2.13 defines by an NXDOMAIN answer (RFC 8020).
    const existence = await deps.dns.resolve(name, 'A')
    result.domainExists = existence.status === 'nxdomain' ? false : isFailure(existence) ? null : true
    tag = result.domainExists === false ? 'np' : 'sp'
    findings.push(
      applied.role === 'public_suffix_domain'
        ? {
            code: 'psd_policy_applies',
            severity: 'medium',
            message: `Neither ${name} nor its Organizational Domain publishes DMARC; the public suffix operator's record at ${applied.query.name} applies (${tag}).`,
          }
        : {
            code: 'inherited_policy',
            severity: 'info',
            message: `${name} has no record of its own; the record of ${applied.query.domain} applies through its ${tag} policy.`,
          },
    )
  }
  if (!parsed.ok) {
    findings.push({
      code: 'policy_record_unusable',
      severity: 'high',
      message: `The DMARC record at ${applied.query.name} is unusable, so receivers apply no DMARC policy.`,
    })
    return result
  }
  result.record = parsed.record
  result.appliedPolicy = { tag, policy: parsed.record.effective[tag], testing: parsed.record.testing }
  return result
}

function chooseRecord(
  name: string,
  organizationalDomain: string,
  queries: readonly DmarcQuery[],
): { query: DmarcQuery; role: PolicyRole } | null {
  // RFC 9989 §4.10.1, in order of preference: the Author Domain, its Organizational Domain, its PSD.
  const author = queries[0]
  if (author?.outcome === 'record') return { query: author, role: 'author_domain' }
  const found = queries.filter((query) => query.outcome === 'record')
  const org = found.find((query) => query.domain === organizationalDomain)
  if (org !== undefined) return { query: org, role: 'organizational_domain' }
  const psd = found.find((query) => query.psd === 'y' && query.domain !== name)
  return psd === undefined ? null : { query: psd, role: 'public_suffix_domain' }
}

async function queryDmarc(
  dns: DnsResolver,
  domain: string,
  findings: DmarcDiscoveryFinding[],
): Promise<DmarcQuery> {
  const name = `_dmarc.${domain}`
  const answer = await dns.resolve(name, 'TXT')
  const query: DmarcQuery = { domain, name, outcome: 'none', record: null, psd: null }
  if (isFailure(answer)) {
    findings.push({
      code: 'dns_temperror',
      severity: 'medium',
      message: `The TXT lookup of ${name} failed (${answer.status === 'timeout' ? 'timeout' : answer.reason}).`,
    })
    return { ...query, outcome: 'temperror' }
  }
  const texts = txtValues(answer)
  // RFC 9989 §4.10 steps 2 and 6: keep only records that start with v=DMARC1.
  const records = texts.filter(isDmarcRecordText)
  for (const text of texts) {
    if (!isDmarcRecordText(text) && /^\s*v\s*=\s*dmarc/i.test(text)) {
      const reason = parseDmarcRecord(text).findings[0]?.message ?? ''
      findings.push({
        code: 'record_ignored',
        severity: 'high',
        message: `A TXT record at ${name} looks like DMARC but is ignored: ${reason}`,
      })
    }
  }
  if (records.length > 1) {
    // RFC 9989 §4.10 steps 2 and 6 (RFC 7489 §6.6.3): several records are all discarded.
    findings.push({
      code: 'multiple_records',
      severity: 'high',
      message: `${name} has ${records.length} DMARC records; receivers discard all of them, as if none were published.`,
    })
    return { ...query, outcome: 'multiple' }
  }
  const record = records[0]
  if (record === undefined) return query
  const parsed = parseDmarcRecord(record)
  const psdTag = (parsed.ok ? parsed.record.tags : parsed.tags)?.psd?.toLowerCase()
  const psd = psdTag === 'y' || psdTag === 'n' ? psdTag : 'u'
  return { ...query, outcome: 'record', record, psd }
}

function isFailure(answer: DnsAnswer): answer is Extract<DnsAnswer, { status: 'timeout' | 'error' }> {
  return answer.status === 'timeout' || answer.status === 'error'
}

function oneLabelBelow(start: string, parent: string): string {
  const labels = start.split('.')
  return labels.slice(labels.length - parent.split('.').length - 1).join('.')
}
