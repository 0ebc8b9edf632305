// DMARC policy progression (issue #6, docs/policy-progression.md): the view, the daily run (advance, propose,
// roll back, or hold), approving a proposal and rolling back by hand. A change goes through the
// hosted record in one transaction with its history row, audit entry and `dmarc.progressed` event
// (PolicyStore.apply); for a domain whose `_dmarc` TXT is on a connected DNS provider, the record is
// first written through the provider (ZoneDmarc) and only a successful write is recorded.
// Rules: progression.ts; docs/policy-progression.md.

import { describeLevel, type PolicyLevel, withPolicy } from '../dmarc/hosting.ts'
import type { DmarcDomain } from '../dmarc/hosting-use-cases.ts'
import { findDmarcDomain, requireVerifiedDomain } from '../dmarc/hosting-use-cases.ts'
import type { Outcome } from '../dns-providers/use-cases.ts'
import { dmarcProgressed } from '../events/event.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import {
  type Evaluation,
  evaluateProgression,
  HISTORY_LIMIT,
  type RecordInForce,
  recordInForce,
} from './evaluate.ts'
import type { NewPolicyChange, PolicyChange, ProgressionDeps, ProgressionWriteDeps } from './ports.ts'
import type { ProgressionDecision } from './progression.ts'

export const SYSTEM_ACTOR = 'system'

export interface ProgressionView extends Evaluation {
  pending: PolicyChange | null
}

export async function viewProgression(
  deps: ProgressionDeps,
  input: { accountId: string; name: string },
): Promise<Result<ProgressionView>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const evaluation = await evaluateProgression(deps, { accountId: input.accountId, domain: found.value })
  const pending = evaluation.history.find((change) => change.status === 'proposed') ?? null
  return ok({ ...evaluation, pending })
}

const samePolicy = (a: PolicyLevel, b: PolicyLevel) =>
  a.policy === b.policy && (a.pct ?? 100) === (b.pct ?? 100)

/** The change a decision makes to the record in force: only p (and pct) move, every other tag stays. */
function changeOf(
  decision: ProgressionDecision,
  hosted: RecordInForce,
  actor: string,
  at: Date,
): NewPolicyChange {
  const target = decision.target!
  return {
    kind: decision.kind!,
    from: { policy: hosted.policy, pct: hosted.pct },
    to: target,
    fromRecord: hosted.record,
    toRecord: withPolicy(hosted.record, target.policy, target.pct),
    reason: decision.reason,
    actor,
    at,
  }
}

/** The most recent applied change a rollback can undo: not a rollback, not undone, still in force. */
export function undoable(evaluation: Pick<Evaluation, 'history' | 'inForce'>): PolicyChange | null {
  const hosted = evaluation.inForce
  if (hosted === null) return null
  const change = evaluation.history.find(
    (c) => c.status === 'applied' && c.kind !== 'rollback' && c.rolledBackAt === null,
  )
  return change !== undefined && samePolicy(change.to, hosted) ? change : null
}

export type RunOutcome =
  | 'advanced'
  | 'rolled_back'
  | 'proposed'
  | 'unchanged'
  | 'held'
  | 'conflict'
  | 'skipped'
  /**
   * Reading or writing through the DNS provider failed: the previous record is in place; the job
   * retries.
   */
  | 'failed'

/** The daily run for one domain (src/jobs/policy.ts). */
export async function runProgression(
  deps: ProgressionDeps,
  input: { accountId: string; domainId: number },
): Promise<{ outcome: RunOutcome; decision: ProgressionDecision | null; error?: string }> {
  const domain = await deps.store.domainById(input.accountId, input.domainId)
  if (domain === null) return { outcome: 'skipped', decision: null }
  const evaluation = await evaluateProgression(deps, { accountId: input.accountId, domain })
  const { decision, inForce: hosted } = evaluation
  const at = deps.now()
  // The provider could not be read: nothing is decided on a record not seen, and the job retries
  // (the failed read raised dns_provider_read_failing, domain/dns-providers/read-health.ts).
  const unread = evaluation.readFailure
  if (unread !== null) {
    const why = 'message' in unread ? unread.message : unread.code
    return { outcome: 'failed', decision, error: `reading the DNS provider failed: ${why}` }
  }
  if (decision.action === 'hold' || hosted === null) {
    // A proposal that no longer holds is withdrawn rather than left for approval.
    await deps.store.withdraw(input.accountId, domain.id)
    return { outcome: 'held', decision }
  }
  const change = changeOf(decision, hosted, SYSTEM_ACTOR, at)
  if (decision.action === 'propose') {
    return { outcome: await deps.store.propose(input.accountId, domain.id, change), decision }
  }
  const written = await writeThrough(deps, input.accountId, domain, hosted, change)
  if (!written.ok) {
    const { failure } = written
    if (failure.code === 'validation_failed') return { outcome: 'conflict', decision, error: failure.message }
    return { outcome: 'failed', decision, error: 'message' in failure ? failure.message : failure.code }
  }
  const applied = await deps.store.apply(input.accountId, domain.id, {
    ...change,
    rollsBack: decision.kind === 'rollback' ? evaluation.lastChange?.id : undefined,
    event: dmarcProgressed(domain.name, change.from.policy, change.to.policy, change.reason, at),
    through: hosted.home,
  })
  if (applied === 'conflict') return { outcome: 'conflict', decision }
  return { outcome: decision.kind === 'rollback' ? 'rolled_back' : 'advanced', decision }
}

export interface AppliedResult {
  domain: string
  change: { kind: 'advance' | 'rollback'; from: PolicyLevel; to: PolicyLevel; record: string; reason: string }
}

/**
 * Applies the waiting proposal of an `assisted` domain. It is evaluated again first: a proposal the
 * figures no longer support (a source started failing, the record was edited) is withdrawn and
 * refused, so an approval never applies a step the engine would not take now.
 */
export async function approveProposal(
  deps: ProgressionWriteDeps,
  input: { accountId: string; name: string; actor: string },
): Promise<Outcome<AppliedResult>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const verified = requireVerifiedDomain(domain)
  if (!verified.ok) return verified
  const pending = await deps.store.pending(input.accountId, domain.id)
  if (pending === null) {
    return invalid('proposal', `No DMARC policy change of ${domain.name} is waiting for approval.`)
  }
  const evaluation = await evaluateProgression(deps, { accountId: input.accountId, domain })
  const { decision, inForce: hosted } = evaluation
  // A provider that cannot be read says nothing about the proposal: it keeps waiting (502).
  if (evaluation.readFailure !== null) return { ok: false, failure: evaluation.readFailure }
  if (hosted !== null && hosted.record !== pending.fromRecord) {
    await deps.store.withdraw(input.accountId, domain.id)
    return fail({
      code: 'proposal_stale',
      message: `The DMARC record of ${domain.name} changed since this proposal was made (it is now "${hosted.record}"); the proposal was withdrawn.`,
    })
  }
  const holds =
    hosted !== null &&
    decision.kind === pending.kind &&
    decision.target !== null &&
    samePolicy(decision.target, pending.to)
  if (!holds) {
    await deps.store.withdraw(input.accountId, domain.id)
    return invalid('proposal', `The proposal no longer holds and was withdrawn: ${decision.reason}`)
  }
  const at = deps.now()
  const reason = `${pending.reason} Approved by ${input.actor}.`
  return applyChange(deps, input.accountId, domain, hosted, {
    ...changeOf(decision, hosted, input.actor, at),
    reason,
    proposalId: pending.id,
    rollsBack: pending.kind === 'rollback' ? evaluation.lastChange?.id : undefined,
  })
}

/** Discards the waiting proposal of an `assisted` domain; nothing is written. */
export async function rejectProposal(
  deps: Pick<ProgressionDeps, 'store'>,
  input: { accountId: string; name: string; actor: string },
): Promise<Result<{ domain: string; rejected: PolicyChange }>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const pending = await deps.store.pending(input.accountId, domain.id)
  if (pending === null || !(await deps.store.withdraw(input.accountId, domain.id)))
    return invalid('proposal', `No DMARC policy change of ${domain.name} is waiting for approval.`)
  return ok({ domain: domain.name, rejected: { ...pending, status: 'withdrawn' } })
}

/** Returns the policy to where the last change in force started (docs/policy-progression.md). */
export async function rollbackPolicy(
  deps: ProgressionWriteDeps,
  input: { accountId: string; name: string; actor: string; reason?: string },
): Promise<Outcome<AppliedResult>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const verified = requireVerifiedDomain(domain)
  if (!verified.ok) return verified
  const [hosted, history] = await Promise.all([
    recordInForce(deps, input.accountId, domain),
    deps.store.history(input.accountId, domain.id, HISTORY_LIMIT),
  ])
  if (hosted === null) return fail({ code: 'not_found', resource: 'hosted DMARC record' })
  const change = undoable({ history, inForce: hosted })
  if (change === null) {
    return invalid('policy', `Nothing to roll back: no policy change of ${domain.name} is in force.`)
  }
  const why = input.reason?.trim() ? `: ${input.reason.trim()}` : ''
  return applyChange(deps, input.accountId, domain, hosted, {
    kind: 'rollback',
    from: { policy: hosted.policy, pct: hosted.pct },
    to: change.from,
    fromRecord: hosted.record,
    toRecord: withPolicy(hosted.record, change.from.policy, change.from.pct),
    reason: `Rolled back by hand from ${describeLevel(hosted)} to ${describeLevel(change.from)}${why}.`,
    actor: input.actor,
    at: deps.now(),
    rollsBack: change.id,
  })
}

/**
 * A change to a record at a connected DNS provider, written through it (one DNS write, read back,
 * audited: docs/dns-providers.md "A write"); nothing to do for a hosted record, which the store
 * replaces in the transaction recording the change.
 */
function writeThrough(
  deps: ProgressionDeps,
  accountId: string,
  domain: DmarcDomain,
  hosted: RecordInForce,
  change: NewPolicyChange,
): Promise<Outcome<unknown>> {
  if (hosted.home === 'hosted') return Promise.resolve(ok(null))
  if (deps.zoneDmarc === undefined) throw new Error('a provider record without the ZoneDmarc port')
  return deps.zoneDmarc.write(accountId, domain.name, {
    fromRecord: change.fromRecord,
    toRecord: change.toRecord,
    actor: change.actor,
    reason: change.reason,
  })
}

async function applyChange(
  deps: ProgressionWriteDeps,
  accountId: string,
  domain: DmarcDomain,
  hosted: RecordInForce,
  change: NewPolicyChange & { proposalId?: number; rollsBack?: number },
): Promise<Outcome<AppliedResult>> {
  // A provider write takes its DNS write from the limit itself (domain/policy/provider-record.ts).
  if (hosted.home === 'hosted') {
    const allowed = await deps.dnsWrites(accountId)
    if (!allowed.ok) return allowed
  }
  const written = await writeThrough(deps, accountId, domain, hosted, change)
  if (!written.ok) return written
  const event = dmarcProgressed(domain.name, change.from.policy, change.to.policy, change.reason, change.at)
  const outcome = await deps.store.apply(accountId, domain.id, { ...change, event, through: hosted.home })
  if (outcome === 'conflict') {
    return invalid('policy', `The hosted DMARC record of ${domain.name} changed meanwhile; try again.`)
  }
  const { kind, from, to, toRecord: record, reason } = change
  return ok({ domain: domain.name, change: { kind, from, to, record, reason } })
}
