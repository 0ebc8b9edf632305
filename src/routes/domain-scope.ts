import type { ReportDomainIds } from '../../domain/reports/aggregate-reads.ts'
import { reportDomainId } from '../../domain/reports/aggregate-use-cases.ts'
import { unwrap } from '../../plugins/failures.ts'

/**
 * The id of a domain of the caller's account, named as in the path; any other name is 403
 * `domain_not_found` (domain/domains/account-domain.ts).
 */
export async function domainIdOf(reports: ReportDomainIds, accountId: string, name: string): Promise<number> {
  return unwrap(await reportDomainId({ reports }, { accountId, domain: name }))
}
