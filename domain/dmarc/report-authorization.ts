import type { DnsAnswer, DnsResolver } from '../dns/ports.ts'
import { txtValues } from '../dns/txt.ts'
import type { Finding } from '../shared/finding.ts'
import { type DmarcRecord, isDmarcRecordText, parseDmarcRecord } from './record.ts'
import { parseReportUriList, type ReportUri } from './report-uri.ts'

// Verifying external report destinations: RFC 7489 §7.1, RFC 9990 §4 (aggregate) and RFC 9991 §5
// (failure). A receiver sends reports to a host outside the policy's Organizational Domain only if
// that host publishes `<policy-domain>._report._dmarc.<host>` (or a wildcard covering it).

export interface ReportAuthorizationDeps {
  dns: DnsResolver
}

export type ReportAuthorizationStatus = 'not_required' | 'authorized' | 'not_authorized' | 'temperror'

export type ReportAuthorizationCode =
  | 'external_destination_not_authorized'
  | 'external_destination_temperror'
  | 'report_override_host_mismatch'
  | 'authorization_name_too_long'

export type ReportAuthorizationFinding = Finding<ReportAuthorizationCode>

export interface ReportDestination {
  tag: 'rua' | 'ruf'
  uri: string
  host: string
  status: ReportAuthorizationStatus
  /** The authorization name queried, null when the destination is internal. */
  name: string | null
  /** The v=DMARC1 record that authorizes the destination. */
  record: string | null
  /** URIs the destination asks to use instead (RFC 7489 §7.1), all at the same host. */
  override: ReportUri[]
}

export interface ReportAuthorization {
  destinations: ReportDestination[]
  findings: ReportAuthorizationFinding[]
}

export interface ReportAuthorizationInput {
  /** The domain the record was published for (where `_dmarc.<policyDomain>` was found). */
  policyDomain: string
  organizationalDomain: string
  record: Pick<DmarcRecord, 'rua' | 'ruf'>
}

type HostAnswer =
  | { status: 'authorized'; record: string }
  | { status: 'not_authorized' | 'temperror'; record: null; reason?: string }

export async function checkReportAuthorization(
  deps: ReportAuthorizationDeps,
  input: ReportAuthorizationInput,
): Promise<ReportAuthorization> {
  const policyDomain = input.policyDomain.toLowerCase()
  const org = input.organizationalDomain.toLowerCase()
  const findings: ReportAuthorizationFinding[] = []
  const answers = new Map<string, Promise<HostAnswer>>()
  const destinations: ReportDestination[] = []
  const entries = [
    ...input.record.rua.map((uri) => ({ tag: 'rua' as const, uri })),
    ...input.record.ruf.map((uri) => ({ tag: 'ruf' as const, uri })),
  ]
  for (const { tag, uri } of entries) {
    const host = uri.host
    if (host === null) continue
    const base = { tag, uri: uri.uri, host, name: null, record: null, override: [] }
    // A destination inside the Organizational Domain needs no authorization. Working out the host's
    // own Organizational Domain would take another tree walk per host; being at or below ours is
    // what "same Organizational Domain" means for every host we can see from here.
    if (host === org || host.endsWith(`.${org}`)) {
      destinations.push({ ...base, status: 'not_required' })
      continue
    }
    const name = `${policyDomain}._report._dmarc.${host}`
    // RFC 9990 §4: a name beyond the DNS limits cannot be queried, so the destination is not authorized.
    if (name.length > 253 || name.split('.').some((label) => label.length > 63)) {
      findings.push({
        code: 'authorization_name_too_long',
        severity: 'medium',
        message: `${tag}: ${name} is too long to be a DNS name, so ${uri.uri} cannot be authorized.`,
      })
      destinations.push({ ...base, name, status: 'not_authorized' })
      continue
    }
    let pending = answers.get(name)
    if (pending === undefined) {
      pending = queryAuthorization(deps.dns, name)
      answers.set(name, pending)
    }
    const answer = await pending
    const destination: ReportDestination = { ...base, name, status: answer.status, record: answer.record }
    if (answer.status === 'authorized') {
      const override = readOverride(answer.record, tag)
      if (override.some((candidate) => candidate.host !== host)) {
        // RFC 7489 §7.1 / RFC 9990 §4: an override pointing at another host voids both URIs.
        destination.status = 'not_authorized'
        findings.push({
          code: 'report_override_host_mismatch',
          severity: 'high',
          message: `${tag}: the authorization record at ${name} redirects reports to another host; receivers send to neither.`,
        })
      } else destination.override = override
    } else if (answer.status === 'not_authorized') {
      findings.push({
        code: 'external_destination_not_authorized',
        severity: tag === 'rua' ? 'high' : 'medium',
        message: `${tag}: ${host} has not authorized reports for ${policyDomain} (no v=DMARC1 record at ${name}); receivers will not send ${tag === 'rua' ? 'aggregate' : 'failure'} reports to ${uri.uri}.`,
      })
    } else {
      findings.push({
        code: 'external_destination_temperror',
        severity: 'low',
        message: `${tag}: the lookup of ${name} failed (${answer.reason ?? 'DNS error'}); try again later.`,
      })
    }
    destinations.push(destination)
  }
  return { destinations, findings }
}

async function queryAuthorization(dns: DnsResolver, name: string): Promise<HostAnswer> {
  const answer: DnsAnswer = await dns.resolve(name, 'TXT')
  if (answer.status === 'timeout') return { status: 'temperror', record: null, reason: 'timeout' }
  if (answer.status === 'error') return { status: 'temperror', record: null, reason: answer.reason }
  if (answer.status !== 'ok') return { status: 'not_authorized', record: null }
  // RFC 9990 §4: at least one record that is a tag-value list starting with v=DMARC1 authorizes.
  const record = txtValues(answer).find(isDmarcRecordText)
  return record === undefined ? { status: 'not_authorized', record: null } : { status: 'authorized', record }
}

function readOverride(record: string, tag: 'rua' | 'ruf'): ReportUri[] {
  // The authorizing record need not carry a policy (a bare "v=DMARC1" is the usual form), so read
  // the tag itself rather than requiring the record to be a usable policy record.
  const parsed = parseDmarcRecord(record)
  const value = (parsed.ok ? parsed.record.tags : parsed.tags)?.[tag]
  return value === undefined ? [] : parseReportUriList(value).uris
}
