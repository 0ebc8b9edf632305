// Hosted DMARC through a connected DNS provider (issue #7): the service writes the one record the
// user would otherwise publish, `_dmarc.<domain> CNAME <label>._dmarc.<SPF_ZONE>`, in place of the
// TXT record there (nothing may sit beside a CNAME, RFC 1034 §3.6.2); a rollback restores that TXT.
// From then on policy progression changes the hosted record without touching the user's zone.

import {
  type Actor,
  type PublishDeps,
  type Published,
  publishThroughProvider,
} from '../dns-providers/publish.ts'
import type { Outcome } from '../dns-providers/use-cases.ts'
import { DEFAULT_TTL } from '../dns-providers/writes.ts'
import { invalid } from '../shared/result.ts'
import { type DmarcHostingStore, findDmarcDomain, requireVerifiedDomain } from './hosting-use-cases.ts'

export async function publishDmarcThroughProvider(
  deps: { hosting: Pick<DmarcHostingStore, 'domain' | 'get'>; providers: PublishDeps },
  input: Omit<Actor, 'reason'> & { name: string; dryRun: boolean },
): Promise<Outcome<Published>> {
  const found = await findDmarcDomain(deps.hosting, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const verified = requireVerifiedDomain(domain)
  if (!verified.ok) return verified
  const hosted = await deps.hosting.get(input.accountId, domain.id)
  if (hosted === null)
    return invalid(
      'name',
      `The DMARC record of ${domain.name} is not hosted: host it first (POST /domains/${domain.name}/dmarc/host).`,
    )
  return publishThroughProvider(deps.providers, {
    ...input,
    domain: domain.name,
    set: { name: `_dmarc.${domain.name}`, type: 'CNAME', ttl: DEFAULT_TTL, values: [hosted.name] },
    options: { replacesType: 'TXT' },
    reason: `POST /domains/${domain.name}/dmarc/host/publish`,
  })
}
