// A failed SPF write through a connected DNS provider, retried (issue #19, part 2): at automation
// level `automatic`, a change whose write failed (the provider could not be read, refused the write,
// or did not hold it as sent) left the previous record in place and was stored as `retrying`
// (SpfProposalStore.retryLater) with its `spf.provider-retry` job. Each run writes it with the same
// path as the first try (docs/dns-providers.md "A write": plan, DNS-write limit, apply, read back
// from the provider and over DNS, audit, rollback), but only while the provider still holds the SPF
// record the change was computed from: a record edited meanwhile is never written over, the retry
// is given up (`abandoned`) and the `spf_provider_write_failing` alert says so. After the queue's
// last retry it is given up as well. docs/spf-management.md "Through a connected provider".

import type { PublishDeps } from '../dns-providers/publish.ts'
import { zoneFor } from '../dns-providers/use-cases.ts'
import { isSpfRecord } from '../spf/record.ts'
import type { SpfStore } from './ports.ts'
import { type SpfProposalStore, stillHolds } from './proposals.ts'
import { planSpfRecord, writeSpfPlan } from './provider-write.ts'

export interface SpfRetryDeps {
  store: Pick<SpfStore, 'domain'>
  proposals: SpfProposalStore
  providers: PublishDeps
  now: () => Date
}

export type SpfRetryOutcome =
  /** Written (or found already held) through the provider; the retry row is `applied`. */
  | { outcome: 'written'; writeId: string | null; verified: boolean }
  /** Nothing to retry: written, replaced by a newer change or given up meanwhile. */
  | { outcome: 'done' }
  /** Given up for good (`abandoned`): `error` says why. */
  | { outcome: 'abandoned'; error: string }
  /** Failed again, the previous record in place: the job retries. */
  | { outcome: 'failed'; error: string }

const messageOf = (failure: { code: string; message?: string }) => failure.message ?? failure.code

export const RETRY_ACTOR = 'system'

/**
 * One retry of a `retrying` SPF write. `final`: the job's last attempt, after which a failure
 * gives the write up instead of waiting for another retry.
 */
export async function retrySpfWrite(
  deps: SpfRetryDeps,
  input: { accountId: string; domainId: number; domain: string; proposalId: number; final: boolean },
): Promise<SpfRetryOutcome> {
  const { accountId, domainId } = input
  const row = await deps.proposals.get(accountId, domainId, input.proposalId)
  if (row === null || row.status !== 'retrying') return { outcome: 'done' }
  const giveUp = async (error: string): Promise<SpfRetryOutcome> => {
    const decided = await deps.proposals.decide(accountId, domainId, row.id, {
      status: 'abandoned',
      by: RETRY_ACTOR,
      at: deps.now(),
      error,
    })
    return decided === null ? { outcome: 'done' } : { outcome: 'abandoned', error }
  }
  const failed = async (error: string): Promise<SpfRetryOutcome> => {
    if (input.final)
      return giveUp(
        `gave up after ${row.attempts + 1} retries: ${error}. The previous record is in place; make the change again.`,
      )
    await deps.proposals.retried(accountId, domainId, row.id, error)
    return { outcome: 'failed', error }
  }

  const domain = await deps.store.domain(accountId, input.domain)
  if (domain === null || domain.id !== domainId || !domain.verified)
    return giveUp(`${input.domain} is no longer a verified domain of the account: nothing was written.`)
  if (domain.automationLevel !== 'automatic')
    return giveUp(
      `${input.domain} is no longer at automation level automatic (now ${domain.automationLevel}): nothing was written; make the change again.`,
    )
  const target = await zoneFor(deps.providers, accountId, domain.name)
  if (!target.ok) return failed(messageOf(target.failure))
  if (target.value === null)
    return giveUp(`No connected DNS provider holds a zone for ${domain.name} any more: nothing was written.`)
  // The provider's record, read now: what the write replaces, and what the change must be based on.
  const planned = await planSpfRecord(target.value, domain.name, row.toRecord)
  if (!planned.ok) return failed(messageOf(planned.failure))
  const plan = planned.value
  if (!plan.changed) {
    // The provider holds the record already (written by the first try after all, or by hand).
    await deps.proposals.decide(accountId, domainId, row.id, {
      status: 'applied',
      by: RETRY_ACTOR,
      at: deps.now(),
    })
    return { outcome: 'written', writeId: null, verified: true }
  }
  if (!stillHolds(row, plan.before)) {
    const held = (plan.before?.values ?? []).filter(isSpfRecord)
    return giveUp(
      `the SPF record at the DNS provider is now ${JSON.stringify(held)}, not ${JSON.stringify(row.fromRecord)} that this change was computed from: it was not written over the newer record; make the change again`,
    )
  }
  const written = await writeSpfPlan(deps.providers, target.value, plan, {
    accountId,
    actor: row.actor,
    reason: `${row.reason}; retried by the spf.provider-retry job (the first write failed: ${row.lastError ?? 'unknown'})`,
  })
  if (!written.ok) return failed(messageOf(written.failure))
  const write = written.value
  await deps.proposals.decide(accountId, domainId, row.id, {
    status: 'applied',
    by: RETRY_ACTOR,
    at: deps.now(),
    writeId: write?.id ?? null,
  })
  return { outcome: 'written', writeId: write?.id ?? null, verified: write?.status === 'verified' }
}
