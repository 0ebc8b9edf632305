import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { canonicalIpText } from '../spf/ip.ts'
import type { ReportDomainIds } from './aggregate-reads.ts'
import { type PeriodInput, reportDomainId } from './aggregate-use-cases.ts'
import type { FailureTlsReads, TlsSummary } from './failure-tls-reads.ts'
import { type Period, periodOf } from './period.ts'
import { timeFilters } from './time-filters.ts'

// The failure (forensic, RFC 6591) and TLS-RPT (RFC 8460) reads of the API (docs/api.md). A domain
// named in the request is the caller's or 403 `domain_not_found`, checked before anything else.

/** The account's failure reports, newest first, of one domain if named, arrived in a time range. */
export async function listFailureReports(
  deps: { reports: ReportDomainIds; failureTls: Pick<FailureTlsReads, 'listForensic'> },
  input: {
    accountId: string
    domain?: string
    since?: string
    until?: string
    sourceIp?: string
    page: PageRequest
  },
): Promise<Result<Page<Record<string, unknown>>>> {
  let domainId: number | undefined
  if (input.domain !== undefined) {
    const found = await reportDomainId(deps, { accountId: input.accountId, domain: input.domain })
    if (!found.ok) return found
    domainId = found.value
  }
  // Strict ISO 8601, as the alerts' filters: a date as `until` covers its whole day.
  const times = timeFilters(input)
  if (!times.ok) return times
  // IPv4 or IPv6 (RFC 6591 Source-IP is either), matched in the spelling reports are stored in
  // (RFC 5952; an IPv4-mapped address as its IPv4 address).
  const sourceIp = input.sourceIp === undefined ? undefined : canonicalIpText(input.sourceIp)
  if (sourceIp === null) return invalid('source_ip', 'The source_ip field must be an IPv4 or IPv6 address.')
  const filter = { domainId, ...times.value, sourceIp }
  return ok(await deps.failureTls.listForensic(input.accountId, filter, input.page))
}

/** One failure report of the account; another account's, or none, is `not_found`. */
export async function getFailureReport(
  deps: { failureTls: Pick<FailureTlsReads, 'forensic'> },
  input: { accountId: string; id: number },
): Promise<Result<Record<string, unknown>>> {
  const row = await deps.failureTls.forensic(input.accountId, input.id)
  return row === null ? fail({ code: 'not_found', resource: 'report' }) : ok(row)
}

/** A domain's TLS-RPT over the period: sessions, failures by type, the reports. */
export async function tlsReportSummary(
  deps: { reports: ReportDomainIds; failureTls: Pick<FailureTlsReads, 'tlsSummary'>; now: () => Date },
  input: { accountId: string; domain: string; period: PeriodInput },
): Promise<Result<{ period: Period; summary: TlsSummary }>> {
  const domainId = await reportDomainId(deps, input)
  if (!domainId.ok) return domainId
  const period = periodOf(input.period, deps.now())
  if (!period.ok) return period
  const { from, to } = period.value
  const summary = await deps.failureTls.tlsSummary(input.accountId, domainId.value, from, to)
  return ok({ period: period.value, summary })
}
