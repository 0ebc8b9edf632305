import type { DmarcDiscovery } from '../dmarc/discovery.ts'
import type { ReportUri } from '../dmarc/report-uri.ts'
import { parseAddress } from '../ingest/routing.ts'

// Ownership proven by the DMARC record (docs/api.md, "Verifying a domain"): a record whose rua or ruf
// names this account's report address can only have been published by someone who controls the
// domain's DNS, and it is the first record a user publishes anyway. RFC 7489 §7.1's external
// destination check does not apply: the address is ours, not a third party's.

export interface DmarcProof {
  proof: 'dmarc_rua' | 'dmarc_ruf'
  /** The record that names the address, as published. */
  record: string
}

/**
 * Whether a reporting URI names `reportAddress`: a mailto URI (its `!size` suffix is already split
 * off by the parser, RFC 7489 §6.4) whose address routes where the report address does: domains and
 * local parts compared without case, and a `+tag` sub-address of the key counts, as it does for the
 * intake (domain/ingest/routing.ts, docs/ingestion.md).
 */
export function namesReportAddress(uri: ReportUri, reportAddress: string): boolean {
  if (uri.scheme !== 'mailto' || uri.address === null) return false
  const published = parseAddress(uri.address)
  const ours = parseAddress(reportAddress)
  if (published === null || ours === null || published.domain !== ours.domain) return false
  return published.local === ours.local || published.local.split('+')[0] === ours.local
}

/**
 * The proof the discovered DMARC record gives, or null. The record must be the domain's own or its
 * organizational domain's (whoever publishes that one controls the domain's zone too), never a
 * public suffix operator's (RFC 9989 §4.10.1): that one speaks for domains it does not run.
 */
export function dmarcProof(discovery: DmarcDiscovery, reportAddress: string): DmarcProof | null {
  const record = discovery.record
  if (record === null) return null
  if (discovery.policyRole !== 'author_domain' && discovery.policyRole !== 'organizational_domain')
    return null
  if (record.rua.some((uri) => namesReportAddress(uri, reportAddress)))
    return { proof: 'dmarc_rua', record: record.raw }
  if (record.ruf.some((uri) => namesReportAddress(uri, reportAddress)))
    return { proof: 'dmarc_ruf', record: record.raw }
  return null
}
