// An SPF change for a domain whose zone is on a connected DNS provider (issue #19, part 2): the
// record add-to-spf computes (the user's record with the new term, or with `include:<hosted>` for a
// managed domain) is, at automation level `automatic`, written through the provider with the
// ordinary write path (docs/dns-providers.md "A write": plan, DNS-write limit, apply, read back,
// audit, rollback); at `assisted` it is planned only, the diff returned as a proposal; at `manual`
// nothing is planned (the record to publish is the answer, as without a provider). A write that
// fails leaves the previous record in place. docs/spf-management.md "Through a connected provider".

import { type PublishDeps, settlePlan } from '../dns-providers/publish.ts'
import { zoneFor } from '../dns-providers/use-cases.ts'
import { DEFAULT_TTL, type Plan, planSet } from '../dns-providers/writes.ts'
import type { AutomationLevel } from '../domains/domain.ts'
import { ok, type Result } from '../shared/result.ts'
import { isSpfRecord } from '../spf/record.ts'
import {
  type AddSourceInput,
  type AddSourceResult,
  addSourceToSpf,
  type SourceDeps,
} from './source-use-cases.ts'

export type ProviderSync =
  /** Written and read back (`write.status` says whether DNS shows it yet). */
  | { status: 'written'; plan: Plan; writeId: string; verified: boolean }
  /** `assisted`: the change planned, not written; approving it is publishing it (spf/publish). */
  | { status: 'proposed'; plan: Plan }
  /** The write (or reading the provider) failed: the previous record is in place. */
  | { status: 'failed'; plan: Plan | null; error: string; writeId: string | null }

const messageOf = (failure: { code: string; message?: string }) => failure.message ?? failure.code

/**
 * Null when there is nothing to do through a provider: `manual`, no connected zone holds the
 * domain, or the provider already holds the record.
 */
export async function syncSpfThroughProvider(
  deps: PublishDeps,
  input: {
    accountId: string
    domain: string
    automation: AutomationLevel
    record: string
    actor: string
    reason: string
  },
): Promise<ProviderSync | null> {
  if (input.automation === 'manual') return null
  const target = await zoneFor(deps, input.accountId, input.domain)
  if (!target.ok) return { status: 'failed', plan: null, error: messageOf(target.failure), writeId: null }
  if (target.value === null) return null
  // The TXT set at the apex keeps its other values (site verifications); every SPF value is
  // replaced by the one record (two would be a permerror, RFC 7208 §4.5).
  const set = { name: input.domain, type: 'TXT', ttl: DEFAULT_TTL, values: [input.record] }
  const planned = await planSet(target.value, input.domain, set, {
    keep: (value) => !isSpfRecord(value),
    keepTtl: true,
  })
  if (!planned.ok) return { status: 'failed', plan: null, error: messageOf(planned.failure), writeId: null }
  const plan = planned.value
  if (!plan.changed) return null
  if (input.automation === 'assisted') return { status: 'proposed', plan }
  const settled = await settlePlan(deps, plan, { ...input, dryRun: false })
  if (!settled.ok) {
    const failure = settled.failure
    const writeId = 'writeId' in failure ? (failure.writeId ?? null) : null
    return { status: 'failed', plan, error: messageOf(failure), writeId }
  }
  const write = settled.value.write!
  if (write.status === 'failed') {
    // Accepted, but the provider holds something else: the previous record goes back.
    if (plan.before !== null) await target.value.provider.upsertRecordSet(target.value.zone, plan.before)
    return { status: 'failed', plan, error: write.error ?? 'not kept by the provider', writeId: write.id }
  }
  return { status: 'written', plan, writeId: write.id, verified: write.status === 'verified' }
}

/**
 * add-to-spf, then the record it computes written through a connected provider according to the
 * domain's automation level (syncSpfThroughProvider). Without provider deps: add-to-spf alone.
 */
export async function addSourceThroughProvider(
  deps: SourceDeps & { providers?: PublishDeps },
  input: AddSourceInput,
): Promise<Result<AddSourceResult & { provider: ProviderSync | null }>> {
  const added = await addSourceToSpf(deps, input)
  if (!added.ok) return added
  const result = added.value
  const found = deps.providers === undefined ? null : await deps.store.domain(input.accountId, result.domain)
  // Only a verified domain's DNS is written (contract §4), and only when its record changes.
  if (deps.providers === undefined || found === null || !found.verified || !result.publish.changed)
    return ok({ ...result, provider: null })
  const provider = await syncSpfThroughProvider(deps.providers, {
    accountId: input.accountId,
    domain: result.domain,
    automation: found.automationLevel,
    record: result.publish.record,
    actor: input.actor,
    reason: `add-to-spf ${input.ip} (POST /domains/${result.domain}/sources/${input.ip}/add-to-spf)`,
  })
  return ok({ ...result, provider })
}
