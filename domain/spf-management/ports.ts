// The ports the SPF management use cases are written against: the store of managed configurations,
// their versions and the hosted records, the report figures of a domain's sending IPs, and the DNS
// write budget. Every tenant-facing method takes the account id (tenant isolation lives in the
// repositories, docs/architecture.md).

import type { AutomationLevel } from '../domains/domain.ts'
import type { DomainEvent } from '../events/event.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import type { Result } from '../shared/result.ts'
import type { HostedRecords, ManagedSpfConfig } from './managed-record.ts'
import type { SpfVersion } from './spf-change.ts'

/** What SPF management needs to know about a domain of the caller's account. */
export interface SpfDomain {
  id: number
  name: string
  verified: boolean
  automationLevel: AutomationLevel
}

/** A managed domain as it is served now. */
export interface ManagedState {
  domainId: number
  label: string
  hostedName: string
  config: ManagedSpfConfig
  version: number
  /** The current version's records: what the responder serves. */
  records: HostedRecords
  activatedAt: Date
  plannedAt: Date
}

export type SpfAction =
  | 'spf.activate'
  | 'spf.update'
  | 'spf.add_source'
  | 'spf.detect_sources'
  | 'spf.rollback'
  | 'spf.reflatten'

/** One change, written in one transaction: config, version, hosted records, audit entry, event. */
export interface SpfChange {
  domainId: number
  label: string
  hostedName: string
  /** The version the change was planned from; null for the first activation. */
  basedOn: number | null
  version: SpfVersion
  action: SpfAction
  /** The configuration before the change (audit), null on activation. */
  before: ManagedSpfConfig | null
  event: DomainEvent | null
}

/**
 * saved; conflict: another change came first (the version moved on, or the domain was activated
 * meanwhile); label_taken: another domain holds the label (a second account with the same name).
 */
export type SaveOutcome = 'saved' | 'conflict' | 'label_taken'

/** A managed record due for re-planning (the scheduled re-flatten; across accounts). */
export interface ReplanItem extends ManagedState {
  accountId: string
  domainName: string
}

export interface SpfStore {
  domain(accountId: string, name: string): Promise<SpfDomain | null>
  get(accountId: string, domainId: number): Promise<ManagedState | null>
  /** Newest first. */
  versions(accountId: string, domainId: number, page: PageRequest): Promise<Page<SpfVersion>>
  version(accountId: string, domainId: number, version: number): Promise<SpfVersion | null>
  /** Whether a domain other than `domainId` holds the label (labels are unique across accounts). */
  labelTaken(label: string, domainId: number): Promise<boolean>
  saveChange(accountId: string, change: SpfChange): Promise<SaveOutcome>
  /** Records re-planned without a change: only the planning time moves. */
  touchPlanned(accountId: string, domainId: number, at: Date): Promise<void>
  /** Managed records planned before `before`, oldest first (system: every account). */
  listManagedForReplan(before: Date, limit: number): Promise<ReplanItem[]>
}

/** Report figures of one sending IP of a domain (messages weighted by count). */
export interface SourceActivity {
  ip: string
  messages: number
  spfAligned: number
  /** DKIM or SPF aligned (RFC 7489 §3.1). */
  dmarcPass: number
  ptr: string | null
  dkimDomains: string[]
  /** The user's verdict on the IP (source_overrides), if any. */
  override: 'legitimate' | 'unwanted' | 'forwarder' | null
}

export interface SourceActivityReader {
  /** Every IP of the domain seen since `since` (YYYY-MM-DD). */
  recent(accountId: string, domainId: number, since: string): Promise<SourceActivity[]>
  /** One IP of the domain since `since`; null when the reports did not name it. */
  one(accountId: string, domainId: number, ip: string, since: string): Promise<SourceActivity | null>
}

/**
 * Counts one DNS write against the account's budget (docs/api.md "Authentication and limits": 10 per minute); a
 * `rate_limited` failure when it is spent. Called only when a change is about to be saved.
 */
export type DnsWriteBudget = (accountId: string) => Promise<Result<null>>

/** The records the authoritative DNS responder serves under SPF_ZONE (docs/hosted-dns.md). */
export interface HostedTxtLookup {
  /**
   * What the DNS responder serves at `name`: its TXT records; `{ txt: [] }` for the zone and the
   * names above it (empty non-terminals when the responder's apex is higher, docs/hosted-dns.md);
   * null for a name that does not exist.
   */
  hostedTxt(name: string): Promise<{ txt: string[] } | null>
}
