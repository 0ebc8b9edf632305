// SPF changes waiting for approval (issue #19, part 2): at automation level `assisted`, a change of
// the SPF record of a domain whose zone is on a connected DNS provider (add-to-spf, activation,
// detected sources) is stored as a proposal with the record before and after. Approving writes it
// through the provider with the ordinary write path (docs/dns-providers.md "A write": plan, DNS-write
// limit, apply, read back from the provider and over DNS, audit, rollback); a proposal whose live
// record changed since is refused (409 `proposal_stale`) and withdrawn, never written over the newer
// record. Rejecting discards it. The lifecycle is the DMARC proposals' (domain/policy/ports.ts,
// PolicyStore.propose): one waits per domain, a newer one replaces it.
// docs/spf-management.md "Through a connected provider".

import type { RecordSet } from '../dns-providers/ports.ts'
import type { PublishDeps } from '../dns-providers/publish.ts'
import type { Outcome } from '../dns-providers/use-cases.ts'
import { zoneFor } from '../dns-providers/use-cases.ts'
import type { ProviderWrite } from '../dns-providers/writes.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { isSpfRecord } from '../spf/record.ts'
import { findDomain, requireVerified } from './managed-change.ts'
import type { SpfStore } from './ports.ts'
import { planSpfRecord, writeSpfPlan } from './provider-write.ts'
import type { SourceDeps } from './source-use-cases.ts'

export type SpfProposalStatus = 'proposed' | 'applied' | 'rejected' | 'withdrawn'

export interface SpfProposal {
  id: number
  status: SpfProposalStatus
  /** The SPF record the provider held when the change was proposed; null when there was none. */
  fromRecord: string | null
  toRecord: string
  /** The TXT set at the apex before and after (other TXT values kept). */
  before: RecordSet | null
  after: RecordSet
  reason: string
  actor: string
  createdAt: Date
  decidedAt: Date | null
  decidedBy: string | null
  /** The provider write that applied it. */
  writeId: string | null
}

export type NewSpfProposal = Pick<
  SpfProposal,
  'fromRecord' | 'toRecord' | 'before' | 'after' | 'reason' | 'actor'
> & {
  at: Date
}

export interface SpfDecision {
  status: Exclude<SpfProposalStatus, 'proposed'>
  by: string
  at: Date
  writeId?: string | null
}

/** Scoped by account (infrastructure/repositories/pg-spf-proposal-store.ts). */
export interface SpfProposalStore {
  /**
   * Stores a proposal, withdrawing the one waiting in the same transaction; the waiting one is
   * returned unchanged when it proposes the same record from the same record.
   */
  propose(accountId: string, domainId: number, proposal: NewSpfProposal): Promise<SpfProposal>
  /** Newest first, waiting and decided ones alike. */
  list(accountId: string, domainId: number, limit: number): Promise<SpfProposal[]>
  get(accountId: string, domainId: number, id: number): Promise<SpfProposal | null>
  /** Decides a waiting proposal; null when it was not waiting (any more). */
  decide(accountId: string, domainId: number, id: number, decision: SpfDecision): Promise<SpfProposal | null>
}

/** The SPF use cases' deps with the proposal store (src/compose/spf.ts). */
export type SpfAutomationDeps = SourceDeps & { proposals: SpfProposalStore }

export interface ProposalDeps {
  store: Pick<SpfStore, 'domain'>
  proposals: SpfProposalStore
  now: () => Date
}

export const PROPOSALS_LISTED = 20

/** The domain's proposals, newest first (the waiting one, if any, is the first). */
export async function listSpfProposals(
  deps: Pick<ProposalDeps, 'store' | 'proposals'>,
  input: { accountId: string; name: string },
): Promise<Result<{ domain: string; proposals: SpfProposal[] }>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const proposals = await deps.proposals.list(input.accountId, found.value.id, PROPOSALS_LISTED)
  return ok({ domain: found.value.name, proposals })
}

async function waitingProposal(
  deps: Pick<ProposalDeps, 'store' | 'proposals'>,
  input: { accountId: string; name: string; id: number },
) {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const proposal = await deps.proposals.get(input.accountId, domain.id, input.id)
  if (proposal === null) return fail<never>({ code: 'not_found', resource: 'spf_proposal' })
  if (proposal.status !== 'proposed')
    return invalid<never>(
      'id',
      `This proposal was already ${proposal.status}: only a waiting one can be decided.`,
    )
  return ok({ domain, proposal })
}

/** Whether the SPF record the provider holds now is the one the proposal replaces. */
const stillHolds = (proposal: SpfProposal, before: RecordSet | null) => {
  const held = (before?.values ?? []).filter(isSpfRecord)
  return proposal.fromRecord === null
    ? held.length === 0
    : held.length === 1 && held[0] === proposal.fromRecord
}

export interface ApprovedSpf {
  domain: string
  proposal: SpfProposal
  /** The provider write; null when the provider already held the proposed set. */
  write: ProviderWrite | null
}

/**
 * Writes a waiting proposal through the provider holding the zone. Refused with 409
 * `proposal_stale` (and withdrawn) when the live SPF record is no longer the one it was made
 * from; a failed write leaves the previous record in place and the proposal waiting.
 */
export async function approveSpfProposal(
  deps: ProposalDeps & { providers: PublishDeps },
  input: { accountId: string; name: string; id: number; actor: string },
): Promise<Outcome<ApprovedSpf>> {
  const waiting = await waitingProposal(deps, input)
  if (!waiting.ok) return waiting
  const { domain, proposal } = waiting.value
  const verified = requireVerified(domain)
  if (!verified.ok) return verified
  const target = await zoneFor(deps.providers, input.accountId, domain.name)
  if (!target.ok) return target
  if (target.value === null)
    return invalid('domain', `No connected DNS provider holds a zone for ${domain.name} any more.`)
  // The provider's record, read now: the plan's `before` is what the write replaces.
  const planned = await planSpfRecord(target.value, domain.name, proposal.toRecord)
  if (!planned.ok) return planned
  const plan = planned.value
  if (!stillHolds(proposal, plan.before)) {
    const by = input.actor
    await deps.proposals.decide(input.accountId, domain.id, proposal.id, {
      status: 'withdrawn',
      by,
      at: deps.now(),
    })
    const held = (plan.before?.values ?? []).filter(isSpfRecord)
    return fail({
      code: 'proposal_stale',
      message: `The SPF record of ${domain.name} at the DNS provider changed since this proposal was made (it now holds ${JSON.stringify(held)}); the proposal was withdrawn. Make the change again to get a new proposal.`,
    })
  }
  const reason = `${proposal.reason}; proposal ${proposal.id} approved by ${input.actor}`
  const written = await writeSpfPlan(deps.providers, target.value, plan, {
    accountId: input.accountId,
    actor: input.actor,
    reason,
  })
  if (!written.ok) return written
  const write = written.value
  const decided = await deps.proposals.decide(input.accountId, domain.id, proposal.id, {
    status: 'applied',
    by: input.actor,
    at: deps.now(),
    writeId: write?.id ?? null,
  })
  // Decided meanwhile by another request: its write and ours put the same record there.
  return ok({ domain: domain.name, proposal: decided ?? proposal, write })
}

/** Discards a waiting proposal: nothing is written. */
export async function rejectSpfProposal(
  deps: ProposalDeps,
  input: { accountId: string; name: string; id: number; actor: string },
): Promise<Result<{ domain: string; proposal: SpfProposal }>> {
  const waiting = await waitingProposal(deps, input)
  if (!waiting.ok) return waiting
  const { domain, proposal } = waiting.value
  const decided = await deps.proposals.decide(input.accountId, domain.id, proposal.id, {
    status: 'rejected',
    by: input.actor,
    at: deps.now(),
  })
  if (decided === null) return invalid('id', 'This proposal was decided meanwhile.')
  return ok({ domain: domain.name, proposal: decided })
}
