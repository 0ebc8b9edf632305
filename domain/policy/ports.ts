// What policy progression reads and writes (implemented by
// infrastructure/repositories/pg-policy-store.ts and pg-source-stats.ts; the figures' port is
// domain/sources/ports.ts).

import type { HostedDmarc, PolicyLevel } from '../dmarc/hosting.ts'
import type { DmarcDomain } from '../dmarc/hosting-use-cases.ts'
import type { DnsResolver } from '../dns/ports.ts'
import type { Outcome } from '../dns-providers/use-cases.ts'
import type { DomainEvent } from '../events/event.ts'
import type { Result } from '../shared/result.ts'
import type { SourceFigures } from '../sources/ports.ts'
import type { ChangeKind } from './progression.ts'

export type ChangeStatus = 'proposed' | 'applied' | 'withdrawn'

export interface PolicyChange {
  id: number
  kind: ChangeKind
  status: ChangeStatus
  from: PolicyLevel
  to: PolicyLevel
  fromRecord: string
  toRecord: string
  reason: string
  /** `system` or `user:<id>`. */
  actor: string
  createdAt: Date
  appliedAt: Date | null
  rolledBackAt: Date | null
}

export interface NewPolicyChange {
  kind: Exclude<ChangeKind, 'edit'>
  from: PolicyLevel
  to: PolicyLevel
  fromRecord: string
  toRecord: string
  reason: string
  actor: string
  at: Date
}

export interface AppliedChange extends NewPolicyChange {
  /** The waiting proposal this applies (it becomes the applied row). */
  proposalId?: number
  /** The applied change a rollback undoes (marked rolled back). */
  rollsBack?: number
  event: DomainEvent
  /**
   * Where the record lives: `hosted` (default) replaces the hosted record in the transaction;
   * `provider` was already written through the DNS provider (ZoneDmarc), only the history is kept.
   */
  through?: RecordHome
}

export type RecordHome = 'hosted' | 'provider'

/** The `_dmarc` TXT a connected DNS provider holds (provider-record.ts). */
export interface ZoneDmarcRecord {
  /** The one DMARC record there; null when there is none (or several). */
  record: string | null
  connectionId: string
}

/** A domain's DMARC record in its own zone, on a connected DNS provider (provider-record.ts). */
export interface ZoneDmarc {
  /** Null when no connected zone holds the domain. */
  read(accountId: string, domain: string): Promise<Outcome<ZoneDmarcRecord | null>>
  /**
   * Replaces `fromRecord` with `toRecord` through the provider (one DNS write, read back, audited);
   * refused when the provider no longer holds `fromRecord`. On failure the previous record stays.
   */
  write(
    accountId: string,
    domain: string,
    change: { fromRecord: string; toRecord: string; actor: string; reason: string },
  ): Promise<Outcome<{ writeId: string | null }>>
}

export interface ProgressionCandidate {
  accountId: string
  domainId: number
  name: string
}

export interface PolicyStore {
  domain(accountId: string, name: string): Promise<DmarcDomain | null>
  domainById(accountId: string, domainId: number): Promise<DmarcDomain | null>
  hosted(accountId: string, domainId: number): Promise<HostedDmarc | null>
  /** Newest first (proposals and withdrawn ones included). */
  history(accountId: string, domainId: number, limit: number): Promise<PolicyChange[]>
  pending(accountId: string, domainId: number): Promise<PolicyChange | null>
  /**
   * One transaction: the hosted record replaced (only while it is still `fromRecord`), the change
   * applied (the proposal updated, or a new row), the undone change marked, other proposals
   * withdrawn, an audit entry and the event. 'conflict' when the record changed meanwhile.
   */
  apply(accountId: string, domainId: number, change: AppliedChange): Promise<'applied' | 'conflict'>
  /** Stores a proposal (withdrawing another one); 'unchanged' when the same one is waiting. */
  propose(accountId: string, domainId: number, change: NewPolicyChange): Promise<'proposed' | 'unchanged'>
  /** Withdraws the waiting proposal, if any; whether there was one. */
  withdraw(accountId: string, domainId: number): Promise<boolean>
  /**
   * Verified domains with automation other than manual and a hosted record or a DNS provider
   * connection in their account, by id after `afterId`.
   */
  candidates(afterId: number, limit: number): Promise<ProgressionCandidate[]>
}

/** The report figures (daily rollups), tenant-scoped by the scope. */
export type PolicyFigures = Pick<SourceFigures, 'stats' | 'overrides' | 'daily'>

export interface ProgressionDeps {
  store: PolicyStore
  figures: PolicyFigures
  dns: DnsResolver
  now: () => Date
  /** Domains whose zone is on a connected DNS provider; absent: hosted records only. */
  zoneDmarc?: ZoneDmarc
}

export interface ProgressionWriteDeps extends ProgressionDeps {
  /** Counts a DNS write against the account (docs/api.md "Authentication and limits"). */
  dnsWrites: (accountId: string) => Promise<Result<null>>
}
