// SPF management through a connected DNS provider (issue #7): instead of telling the user what to
// publish at their domain, the service writes it — their SPF record with `include:<hosted>` and
// without the terms the hosted record now holds — into the TXT set at the domain's apex, keeping
// every other TXT value there (site verifications share the RRset). Dry run, read-back, audit and
// rollback are the provider writes' (domain/dns-providers/writes.ts).

import {
  type Actor,
  type PublishDeps,
  type Published,
  settlePlan,
  targetFor,
} from '../dns-providers/publish.ts'
import type { Outcome } from '../dns-providers/use-cases.ts'
import { DEFAULT_TTL, planSet } from '../dns-providers/writes.ts'
import { invalid } from '../shared/result.ts'
import { isSpfRecord } from '../spf/record.ts'
import { findDomain, type SpfDeps } from './managed-change.ts'
import { recordToPublish } from './published-record.ts'

export async function publishSpfThroughProvider(
  deps: { spf: Pick<SpfDeps, 'store' | 'zone'>; providers: PublishDeps },
  input: Omit<Actor, 'reason'> & { name: string; dryRun: boolean },
): Promise<Outcome<Published>> {
  const found = await findDomain(deps.spf.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const state = await deps.spf.store.get(input.accountId, domain.id)
  if (state === null)
    return invalid(
      'name',
      `SPF management is not active for ${domain.name}: activate it first (POST /domains/${domain.name}/spf/activate).`,
    )
  const target = await targetFor(deps.providers, input.accountId, domain.name)
  if (!target.ok) return target
  // The provider's record, not a resolver's (possibly cached) answer, is what gets replaced.
  const read = await target.value.provider.readRecords(target.value.zone, { name: domain.name, type: 'TXT' })
  const current = read.ok ? (read.value[0]?.values.filter(isSpfRecord) ?? []) : []
  // RFC 7208 §4.5: two SPF records are a permerror; the one written replaces every one of them.
  const record = recordToPublish(current[0] ?? null, {
    hosted: state.hostedName,
    config: state.config,
    domain: domain.name,
    zone: deps.spf.zone,
  })
  const plan = await planSet(
    target.value,
    domain.name,
    { name: domain.name, type: 'TXT', ttl: DEFAULT_TTL, values: [record.record] },
    { keep: (value) => !isSpfRecord(value), keepTtl: true },
  )
  if (!plan.ok) return plan
  const reason = `POST /domains/${domain.name}/spf/publish`
  return settlePlan(deps.providers, plan.value, { ...input, reason })
}
