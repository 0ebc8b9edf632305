// The domain a request names, within the caller's account, and the rule that DNS writes act only
// on verified domains (docs/api.md, "Domains" and "Errors"). The API's routes, the DMARC hosting,
// policy and SPF use cases all find domains and refuse unverified ones here, with one answer each.

import { fail, ok, type Result } from '../shared/result.ts'
import { normalizeDomainName } from './domain-name.ts'

/**
 * The account's domain called `name`, normalised like creation names (so `Bücher.de` finds
 * `xn--bcher-kva.de`); `lookup` reads the caller's account only. Any other name, malformed or
 * another account's, is `domain_not_found` (403): whether it exists elsewhere is not told.
 */
export async function findAccountDomain<D>(
  lookup: (normalizedName: string) => Promise<D | null>,
  name: string,
): Promise<Result<D>> {
  const checked = normalizeDomainName(name)
  const domain = checked.ok ? await lookup(checked.name) : null
  return domain === null ? fail({ code: 'domain_not_found' }) : ok(domain)
}

/** What is refused on an unverified domain, in the refusal's words. */
const WRITES = {
  dmarc: 'DMARC records are only hosted and changed',
  spf: 'SPF changes are only made',
} as const

/** DNS writes (hosted DMARC, policy steps, managed SPF) act only on verified domains: 403 `forbidden`. */
export function requireVerifiedFor(
  domain: { name: string; verified: boolean },
  writes: keyof typeof WRITES,
): Result<null> {
  if (domain.verified) return ok(null)
  return fail({
    code: 'forbidden',
    message: `Verify ownership of ${domain.name} first (POST /domains/${domain.name}/verify): ${WRITES[writes]} for verified domains.`,
  })
}
