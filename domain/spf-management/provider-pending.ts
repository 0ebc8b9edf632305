// An SPF change through a connected DNS provider when another change waits (issue #19, part 2): at
// `assisted` a proposal waiting for approval, at `automatic` a failed write waiting for its retry
// (provider-retry.ts). Made from the same live record, the new change builds on the waiting one —
// its record is computed from the waiting change's record, and its reason lists both — so that
// approving (or the retry, or this write) applies both; replacing the waiting one would lose the
// first change. A waiting change made from another record than the live one is stale and is
// replaced. At `automatic`, a write that fails is stored for the retry job in the same transaction
// as its job (SpfProposalStore.retryLater). docs/spf-management.md "Through a connected provider".

import type { Plan } from '../dns-providers/writes.ts'
import { DEFAULT_TTL } from '../dns-providers/writes.ts'
import type { Result } from '../shared/result.ts'
import { isSpfRecord } from '../spf/record.ts'
import { SAVE_ATTEMPTS } from './managed-change.ts'
import type { SpfDomain, SpfStore } from './ports.ts'
import { type SpfProposal, WaitingChanged } from './proposals.ts'
import { type ProviderAutomation, type ProviderSync, syncSpfThroughProvider } from './provider-sync.ts'
import type { PublishedSpf } from './published-record.ts'
import type { UserRecord } from './user-record.ts'

export interface ChangeToPublish {
  accountId: string
  domain: string
  publish: UserRecord
  /** The record `publish` was computed from (published over DNS). */
  published: PublishedSpf
  actor: string
  reason: string
  /** The same change computed from another SPF record (a waiting change's); refused over 10 lookups. */
  rebase?: (base: string | null) => Promise<Result<UserRecord>>
}

const combinedReason = (waiting: SpfProposal, reason: string) =>
  waiting.reason.includes(reason) ? waiting.reason : `${waiting.reason}; ${reason}`

/**
 * After an SPF change: the record the user publishes (`publish`) through a connected provider,
 * according to the domain's automation level. Only a verified domain's DNS is written
 * (domain/domains/account-domain.ts), and only when its record changes; without provider deps
 * nothing is done.
 */
export async function publishAfterChange(
  deps: { store: Pick<SpfStore, 'domain'>; now: () => Date } & ProviderAutomation,
  input: ChangeToPublish,
): Promise<ProviderSync | null> {
  if (deps.providers === undefined || !input.publish.changed) return null
  const found = await deps.store.domain(input.accountId, input.domain)
  if (found === null || !found.verified || found.automationLevel === 'manual') return null
  // Another change building on the same waiting proposal at once: built again on the newer one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await publishOnce(deps, input, found)
    } catch (error) {
      if (!(error instanceof WaitingChanged) || attempt >= SAVE_ATTEMPTS) throw error
    }
  }
}

async function publishOnce(
  deps: { now: () => Date } & ProviderAutomation,
  input: ChangeToPublish,
  found: SpfDomain,
): Promise<ProviderSync | null> {
  const { providers, proposals } = deps
  if (providers === undefined) return null
  const automatic = found.automationLevel === 'automatic'
  let record = input.publish.record
  let reason = input.reason
  let waiting: SpfProposal | null = null
  // The waiting proposal this one replaces; undefined: replace whatever waits (a stale one).
  let replaces: number | null | undefined
  if (proposals !== undefined && input.rebase !== undefined) {
    const held = await proposals.pending(input.accountId, found.id, automatic ? 'retrying' : 'proposed')
    replaces = held === null ? null : undefined
    if (held !== null && held.fromRecord === input.published.record) {
      replaces = held.id
      const combined = await input.rebase(held.toRecord)
      if (!combined.ok) {
        const why = 'message' in combined.failure ? combined.failure.message : combined.failure.code
        return {
          status: 'failed',
          plan: null,
          error: `this change together with the waiting ${held.status === 'proposed' ? 'proposal' : 'retry'} ${held.id} cannot be made (${why}): nothing was changed`,
          writeId: null,
        }
      }
      waiting = held
      // Unchanged: the waiting change holds this one already.
      record = combined.value.changed ? combined.value.record : held.toRecord
      reason = combined.value.changed ? combinedReason(held, input.reason) : held.reason
    }
  }
  const at = deps.now()
  const propose = async (plan: Plan) => {
    if (proposals === undefined) return null
    const before = (plan.before?.values ?? []).filter(isSpfRecord)
    const stored = await proposals.propose(input.accountId, found.id, {
      // Several SPF values are replaced by the one record; the first stands for them (a stale
      // check on approval compares the whole set anyway).
      fromRecord: before[0] ?? null,
      toRecord: record,
      before: plan.before,
      after: plan.after,
      reason,
      actor: input.actor,
      at,
      ...(replaces === undefined ? {} : { replaces }),
    })
    return stored.id
  }
  const sync = await syncSpfThroughProvider(
    providers,
    {
      accountId: input.accountId,
      domain: input.domain,
      automation: found.automationLevel,
      record,
      basedOn: input.published.record,
      actor: input.actor,
      reason,
    },
    propose,
  )
  if (!automatic || proposals === undefined) return sync
  if (waiting !== null && (sync === null || sync.status === 'written')) {
    // This write carried the waiting retry's change too (or the provider holds it already).
    const writeId = sync?.status === 'written' ? sync.writeId : null
    await proposals.decide(input.accountId, found.id, waiting.id, {
      status: 'applied',
      by: input.actor,
      at,
      writeId,
    })
  }
  if (sync?.status !== 'failed' || sync.behind === true || !proposals.canRetry()) return sync
  const stored = await proposals.retryLater(
    input.accountId,
    { id: found.id, name: found.name },
    {
      fromRecord: input.published.record,
      toRecord: record,
      before: sync.plan?.before ?? null,
      after: sync.plan?.after ?? { name: found.name, type: 'TXT', ttl: DEFAULT_TTL, values: [record] },
      reason,
      actor: input.actor,
      at,
    },
    sync.error,
  )
  return { status: 'retrying', plan: sync.plan, error: sync.error, writeId: sync.writeId, retryId: stored.id }
}
