// An SPF change for a domain whose zone is on a connected DNS provider (issue #19, part 2): the
// record add-to-spf computes (the user's record with the new term, or with `include:<hosted>` for a
// managed domain) is, at automation level `automatic`, written through the provider with the
// ordinary write path (docs/dns-providers.md "A write": plan, DNS-write limit, apply, read back,
// audit, rollback); at `assisted` it is planned and stored as a proposal with its diff (proposals.ts:
// approving writes it the same way); at `manual`
// nothing is planned (the record to publish is the answer, as without a provider). A write that
// fails leaves the previous record in place. docs/spf-management.md "Through a connected provider".

import type { PublishDeps } from '../dns-providers/publish.ts'
import { zoneFor } from '../dns-providers/use-cases.ts'
import type { Plan } from '../dns-providers/writes.ts'
import type { AutomationLevel } from '../domains/domain.ts'
import { ok, type Result } from '../shared/result.ts'
import { isSpfRecord } from '../spf/record.ts'
import type { SpfWriteDeps } from './managed-change.ts'
import type { SpfStore } from './ports.ts'
import type { SpfProposalStore } from './proposals.ts'
import { planSpfRecord, writeSpfPlan } from './provider-write.ts'
import type { PublishedSpf } from './published-record.ts'
import {
  type AddSourceInput,
  type AddSourceResult,
  addSourceToSpf,
  type DetectResult,
  detectSources,
  type SourceDeps,
} from './source-use-cases.ts'
import { type ActivateInput, type ActivateResult, activate } from './use-cases.ts'
import type { UserRecord } from './user-record.ts'

export type ProviderSync =
  /** Written and read back (`write.status` says whether DNS shows it yet). */
  | { status: 'written'; plan: Plan; writeId: string; verified: boolean }
  /**
   * `assisted`: the change planned, not written, and stored as a proposal (proposals.ts) that
   * approving writes; `proposalId` null only where no proposal store is wired.
   */
  | { status: 'proposed'; plan: Plan; proposalId: number | null }
  /** The write (or reading the provider) failed: the previous record is in place. */
  | {
      status: 'failed'
      plan: Plan | null
      error: string
      writeId: string | null
      /** The provider holds another SPF record than the one the change was computed from. */
      behind?: true
    }

/** What the provider path needs beside the SPF use cases' deps; without `providers`, nothing. */
export interface ProviderAutomation {
  providers?: PublishDeps
  proposals?: SpfProposalStore
}

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
    /**
     * The SPF record the change was computed from (the one published over DNS; null: none).
     * When given and the provider holds another, nothing is planned: the change would drop what
     * the newer record holds (DNS not showing the provider's latest record yet, an edit meanwhile).
     */
    basedOn?: string | null
    actor: string
    reason: string
  },
  propose: (plan: Plan) => Promise<number | null> = async () => null,
): Promise<ProviderSync | null> {
  if (input.automation === 'manual') return null
  const target = await zoneFor(deps, input.accountId, input.domain)
  if (!target.ok) return { status: 'failed', plan: null, error: messageOf(target.failure), writeId: null }
  if (target.value === null) return null
  const planned = await planSpfRecord(target.value, input.domain, input.record)
  if (!planned.ok) return { status: 'failed', plan: null, error: messageOf(planned.failure), writeId: null }
  const plan = planned.value
  if (!plan.changed) return null
  const held = (plan.before?.values ?? []).filter(isSpfRecord)
  if (
    input.basedOn !== undefined &&
    !(
      held.length === (input.basedOn === null ? 0 : 1) &&
      (input.basedOn === null || held[0] === input.basedOn)
    )
  )
    return {
      status: 'failed',
      plan: null,
      error: `the SPF record at the DNS provider (${JSON.stringify(held)}) is not the one published over DNS that this change was made from (${JSON.stringify(input.basedOn)}): nothing was written; try again once DNS shows the provider's record`,
      writeId: null,
      behind: true,
    }
  if (input.automation === 'assisted') return { status: 'proposed', plan, proposalId: await propose(plan) }
  const written = await writeSpfPlan(deps, target.value, plan, input)
  if (!written.ok) {
    const failure = written.failure
    const writeId = 'writeId' in failure ? (failure.writeId ?? null) : null
    return { status: 'failed', plan, error: messageOf(failure), writeId }
  }
  const write = written.value!
  return { status: 'written', plan, writeId: write.id, verified: write.status === 'verified' }
}

/**
 * After an SPF change: the record the user publishes (`publish`) through a connected provider,
 * according to the domain's automation level. Only a verified domain's DNS is written
 * (domain/domains/account-domain.ts), and only when its record changes; without provider deps
 * nothing is done.
 */
async function publishAfterChange(
  deps: { store: Pick<SpfStore, 'domain'>; now: () => Date } & ProviderAutomation,
  input: {
    accountId: string
    domain: string
    publish: UserRecord
    /** The record `publish` was computed from (published over DNS). */
    published: PublishedSpf
    actor: string
    reason: string
  },
): Promise<ProviderSync | null> {
  const { providers, proposals } = deps
  if (providers === undefined || !input.publish.changed) return null
  const found = await deps.store.domain(input.accountId, input.domain)
  if (found === null || !found.verified) return null
  const propose = async (plan: Plan) => {
    if (proposals === undefined) return null
    const held = (plan.before?.values ?? []).filter(isSpfRecord)
    const stored = await proposals.propose(input.accountId, found.id, {
      // Several SPF values are replaced by the one record; the first stands for them (a stale
      // check on approval compares the whole set anyway).
      fromRecord: held[0] ?? null,
      toRecord: input.publish.record,
      before: plan.before,
      after: plan.after,
      reason: input.reason,
      actor: input.actor,
      at: deps.now(),
    })
    return stored.id
  }
  return syncSpfThroughProvider(
    providers,
    {
      accountId: input.accountId,
      domain: input.domain,
      automation: found.automationLevel,
      record: input.publish.record,
      basedOn: input.published.record,
      actor: input.actor,
      reason: input.reason,
    },
    propose,
  )
}

/** add-to-spf, then the user's record through a connected provider (publishAfterChange). */
export async function addSourceThroughProvider(
  deps: SourceDeps & ProviderAutomation,
  input: AddSourceInput,
): Promise<Result<AddSourceResult & { provider: ProviderSync | null }>> {
  const added = await addSourceToSpf(deps, input)
  if (!added.ok) return added
  const result = added.value
  const provider = await publishAfterChange(deps, {
    accountId: input.accountId,
    domain: result.domain,
    publish: result.publish,
    published: result.published,
    actor: input.actor,
    reason: `add-to-spf ${input.ip} (POST /domains/${result.domain}/sources/${input.ip}/add-to-spf)`,
  })
  return ok({ ...result, provider })
}

/** Activation, then the record including the hosted one through a connected provider. */
export async function activateThroughProvider(
  deps: SpfWriteDeps & ProviderAutomation,
  input: ActivateInput,
): Promise<Result<ActivateResult & { provider: ProviderSync | null }>> {
  const activated = await activate(deps, input)
  if (!activated.ok) return activated
  const result = activated.value
  const provider = await publishAfterChange(deps, {
    accountId: input.accountId,
    domain: result.domain,
    publish: result.view.publish,
    published: result.published,
    actor: input.actor,
    reason: `SPF management activated (POST /domains/${result.domain}/spf/activate)`,
  })
  return ok({ ...result, provider })
}

/** Detection, then (applied at `automatic`) the user's record through a connected provider. */
export async function detectThroughProvider(
  deps: SourceDeps & ProviderAutomation,
  input: Parameters<typeof detectSources>[1],
): Promise<Result<DetectResult & { provider: ProviderSync | null }>> {
  const detected = await detectSources(deps, input)
  if (!detected.ok) return detected
  const result = detected.value
  const provider =
    result.applied && result.managed !== null
      ? await publishAfterChange(deps, {
          accountId: input.accountId,
          domain: result.domain,
          publish: result.managed.publish,
          published: result.published,
          actor: input.actor,
          reason: `detected sources (POST /domains/${result.domain}/spf/detect-sources)`,
        })
      : null
  return ok({ ...result, provider })
}
