import type { DnsResolver } from '../dns/ports.ts'
import { txtValues } from '../dns/txt.ts'
import { domainVerified } from '../events/event.ts'
import type { Result } from '../shared/result.ts'
import { ok } from '../shared/result.ts'
import { type Domain, verificationRecord } from './domain.ts'
import type { DomainStore } from './ports.ts'
import { getDomain } from './use-cases.ts'

export interface VerificationCheck {
  verified: boolean
  /** The TXT values found at the verification name, so a user can see what is wrong. */
  found: string[]
  message: string
}

/**
 * Contract §4: ownership is proven by TXT `_dmarcwatch.<name>` = `dmarcwatch-verify=<token>`.
 * Verifying an already verified domain changes nothing and sends no second `domain.verified`.
 * The resolver should not be a cache: a user who just published the record must not wait out a
 * cached NXDOMAIN.
 */
export async function verifyDomain(
  deps: { domains: DomainStore; dns: DnsResolver },
  input: { accountId: string; name: string; now: Date },
): Promise<Result<{ domain: Domain; check: VerificationCheck }>> {
  const found = await getDomain(deps, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const { txtName, txtValue } = verificationRecord(domain)
  if (domain.verifiedAt !== null) {
    return ok({ domain, check: { verified: true, found: [], message: 'The domain is already verified.' } })
  }
  const answer = await deps.dns.resolve(txtName, 'TXT')
  if (answer.status === 'timeout' || answer.status === 'error') {
    const why = answer.status === 'timeout' ? 'timed out' : `failed (${answer.reason})`
    return ok({
      domain,
      check: { verified: false, found: [], message: `The DNS lookup of ${txtName} ${why}; try again.` },
    })
  }
  // RFC 7208 §3.3 style: the strings of one TXT record are one value.
  const values = txtValues(answer)
  if (!values.some((value) => value.trim() === txtValue)) {
    const message =
      values.length === 0
        ? `No TXT record at ${txtName}. Publish ${txtName} TXT "${txtValue}" and try again.`
        : `The TXT record at ${txtName} does not hold "${txtValue}".`
    return ok({ domain, check: { verified: false, found: values, message } })
  }
  const verified = await deps.domains.markVerified(
    input.accountId,
    domain.name,
    domainVerified(domain.name, input.now),
  )
  return ok({
    domain: verified ?? domain,
    check: { verified: true, found: values, message: 'Ownership verified.' },
  })
}
