import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
import type { ReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'
import { FailureError } from '../../plugins/failures.ts'

/**
 * The id of a domain of the caller's account, named as in the path (normalised like creation);
 * any other name is 403 `domain_not_found`, whether or not it exists elsewhere (contract §2).
 */
export async function domainIdOf(
  reports: Pick<ReportReader, 'domainId'>,
  accountId: string,
  name: string,
): Promise<number> {
  const checked = normalizeDomainName(name)
  const id = checked.ok ? await reports.domainId(accountId, checked.name) : null
  if (id === null) throw new FailureError({ code: 'domain_not_found' })
  return id
}
