// What every SPF management use case shares: finding the caller's domain, the verified-only rule
// for DNS writes, planning records for a configuration from the user's published record, and
// committing a change as a new version (budget first, then one transaction in the store).

import type { DnsResolver } from '../dns/ports.ts'
import { findAccountDomain, requireVerifiedFor } from '../domains/account-domain.ts'
import type { DomainEvent } from '../events/event.ts'
import { ok, type Result } from '../shared/result.ts'
import { type HostedRecords, hostedName, type ManagedSpfConfig, planManagedRecord } from './managed-record.ts'
import type { DnsWriteBudget, ManagedState, SaveOutcome, SpfAction, SpfDomain, SpfStore } from './ports.ts'
import { outsideLookups, type PublishedSpf, recordToPublish } from './published-record.ts'
import { sourceTerm } from './sources.ts'
import { type ConfigDiff, diffConfigs } from './spf-change.ts'
import type { UserRecord } from './user-record.ts'

export interface SpfDeps {
  store: SpfStore
  dns: DnsResolver
  now: () => Date
  /** The hosted zone (config.spf.zone). */
  zone: string
}

export interface SpfWriteDeps extends SpfDeps {
  dnsWrites: DnsWriteBudget
}

/** A managed domain as served, with what the user should publish at their own domain. */
export interface ManagedView {
  state: ManagedState
  publish: UserRecord
}

/** Optimistic concurrency: a change planned on a version that moved on is planned again. */
export const SAVE_ATTEMPTS = 3

/** The account's domain named in the request (domain/domains/account-domain.ts). */
export const findDomain = (store: Pick<SpfStore, 'domain'>, accountId: string, name: string) =>
  findAccountDomain((normalized) => store.domain(accountId, normalized), name)

/** DNS writes act only on verified domains (domain/domains/account-domain.ts). */
export const requireVerified = (domain: SpfDomain): Result<null> => requireVerifiedFor(domain, 'spf')

export function viewOf(
  state: ManagedState,
  published: PublishedSpf,
  deps: Pick<SpfDeps, 'zone'>,
  domain: string,
): ManagedView {
  const publish = recordToPublish(published.record, {
    hosted: state.hostedName,
    config: state.config,
    domain,
    zone: deps.zone,
  })
  return { state, publish }
}

/**
 * The records for `config`: the lookup budget is what the user's record leaves once the terms the
 * hosted record holds are taken out of it and `include:<hosted>` is put in.
 */
export async function planRecords(
  deps: Pick<SpfDeps, 'dns' | 'zone'>,
  input: { domain: string; label: string; config: ManagedSpfConfig; published: PublishedSpf },
): Promise<Result<{ records: HostedRecords; publish: UserRecord }>> {
  const hosted = hostedName(input.label, deps.zone)
  const publish = recordToPublish(input.published.record, {
    hosted,
    config: input.config,
    domain: input.domain,
    zone: deps.zone,
  })
  const records = await planManagedRecord(
    { dns: deps.dns },
    {
      domain: input.domain,
      zone: deps.zone,
      label: input.label,
      config: input.config,
      outsideLookups: outsideLookups(publish),
    },
  )
  return records.ok ? ok({ records: records.value, publish }) : records
}

export interface CommitInput {
  accountId: string
  domainId: number
  current: ManagedState | null
  label: string
  config: ManagedSpfConfig
  records: HostedRecords
  action: SpfAction
  reason: string
  actor: string
  event: DomainEvent | null
  /** System changes (the scheduled re-plan) are not the account's writes. */
  budget?: boolean
}

/** Spends one DNS write and saves the change as the version after `current`. */
export async function commitChange(
  deps: Pick<SpfWriteDeps, 'dnsWrites' | 'now' | 'zone'> & { store: Pick<SpfStore, 'saveChange'> },
  input: CommitInput,
): Promise<Result<{ outcome: SaveOutcome; state: ManagedState }>> {
  if (input.budget !== false) {
    const allowed = await deps.dnsWrites(input.accountId)
    if (!allowed.ok) return allowed
  }
  const at = deps.now()
  const version = (input.current?.version ?? 0) + 1
  const hosted = hostedName(input.label, deps.zone)
  const outcome = await deps.store.saveChange(input.accountId, {
    domainId: input.domainId,
    label: input.label,
    hostedName: input.current?.hostedName ?? hosted,
    basedOn: input.current?.version ?? null,
    version: {
      version,
      config: input.config,
      records: input.records,
      reason: input.reason,
      actor: input.actor,
      createdAt: at.toISOString(),
    },
    action: input.action,
    before: input.current?.config ?? null,
    event: input.event,
  })
  const state: ManagedState = {
    domainId: input.domainId,
    label: input.current?.label ?? input.label,
    hostedName: input.current?.hostedName ?? hosted,
    config: input.config,
    version,
    records: input.records,
    activatedAt: input.current?.activatedAt ?? at,
    plannedAt: at,
  }
  return ok({ outcome, state })
}

export function isNoChange(diff: ConfigDiff): boolean {
  return diff.added.length + diff.removed.length + diff.settings.length === 0
}

/** "added include:sendgrid.net; removed ip4:192.0.2.0/24; all changed", for reasons and audits. */
export function describeChange(before: ManagedSpfConfig, after: ManagedSpfConfig): string {
  const diff = diffConfigs(before, after)
  const parts = [
    ...(diff.added.length > 0 ? [`added ${diff.added.map(sourceTerm).join(', ')}`] : []),
    ...(diff.removed.length > 0 ? [`removed ${diff.removed.map(sourceTerm).join(', ')}`] : []),
    ...diff.settings.map((setting) => `${setting} set to ${after[setting]}`),
  ]
  return parts.length === 0 ? 'no change' : parts.join('; ')
}
