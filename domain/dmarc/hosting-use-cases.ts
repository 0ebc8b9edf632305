// The hosted DMARC record of a domain (issue #5): what is published and hosted, hosting it, and
// editing it. Writes act only on verified domains (docs/api.md "Domains") and count as DNS writes (docs/api.md "Authentication and limits").
// Rules for the record itself are in hosting.ts; docs/hosted-dns.md, docs/api.md.

import type { DnsResolver } from '../dns/ports.ts'
import { findAccountDomain, requireVerifiedFor } from '../domains/account-domain.ts'
import type { AutomationLevel } from '../domains/domain.ts'
import { fail, ok, type Result } from '../shared/result.ts'
import { type DmarcDiscovery, discoverDmarc } from './discovery.ts'
import {
  type CnameToPublish,
  cnameToPublish,
  defaultHostedRecord,
  describeLevel,
  type HostedDmarc,
  type HostedDmarcView,
  hostedView,
  type PolicyLevel,
  reportsTo,
  validateHostedRecord,
} from './hosting.ts'
import type { DmarcFinding } from './record.ts'

export interface DmarcDomain {
  id: number
  name: string
  verified: boolean
  automationLevel: AutomationLevel
}

export interface HostedDmarcUpdate {
  domainId: number
  record: string
  actor: string
  reason: string
  at: Date
  /** Set when p or pct changes: the edit enters the policy history (docs/policy-progression.md). */
  policyChange: { from: PolicyLevel; to: PolicyLevel; fromRecord: string } | null
}

/** Storage of hosted DMARC records; every method is scoped by account. */
export interface DmarcHostingStore {
  domain(accountId: string, name: string): Promise<DmarcDomain | null>
  get(accountId: string, domainId: number): Promise<HostedDmarc | null>
  /** Hosts the record under the domain's label; `created: false` when it was hosted already. */
  host(
    accountId: string,
    input: { domainId: number; domainName: string; record: string; actor: string; at: Date },
  ): Promise<{ hosted: HostedDmarc; created: boolean }>
  /** null when the domain has no hosted record (in this account). */
  update(accountId: string, input: HostedDmarcUpdate): Promise<HostedDmarc | null>
}

export interface HostingDeps {
  store: DmarcHostingStore
  dns: DnsResolver
  now: () => Date
  /** The account's report address (`<ingest key>@INGEST_DOMAIN`, docs/ingestion.md). */
  reportAddress: (accountId: string) => Promise<string>
  /** Counts a DNS write against the account (docs/api.md "Authentication and limits"); a failure when over the limit. */
  dnsWrites: (accountId: string) => Promise<Result<null>>
}

export interface Delegation {
  /** `_dmarc.<domain>`. */
  name: string
  /** The hosted name the CNAME must point at; null when not hosted. */
  target: string | null
  /** What `_dmarc.<domain>` is a CNAME to now; null when it is not a CNAME. */
  current: string | null
  /** current === target; null when DNS failed (or nothing is hosted). */
  pointed: boolean | null
}

/** The CNAME at `_dmarc.<domain>`: its target, null when there is none, undefined when DNS failed. */
export async function dmarcCname(dns: DnsResolver, domain: string): Promise<string | null | undefined> {
  const answer = await dns.resolve(`_dmarc.${domain}`, 'CNAME')
  if (answer.status === 'timeout' || answer.status === 'error') return undefined
  if (answer.status !== 'ok') return null
  const record = answer.records.find((r) => r.type === 'CNAME')
  return record?.type === 'CNAME' ? record.target.toLowerCase().replace(/\.$/, '') : null
}

export async function delegationOf(
  dns: DnsResolver,
  domain: string,
  hosted: HostedDmarc | null,
): Promise<Delegation> {
  const current = await dmarcCname(dns, domain)
  const target = hosted?.name ?? null
  return {
    name: `_dmarc.${domain}`,
    target,
    current: current ?? null,
    pointed: target === null || current === undefined ? null : current === target,
  }
}

/** The account's domain named in the request (domain/domains/account-domain.ts). */
export const findDmarcDomain = (store: Pick<DmarcHostingStore, 'domain'>, accountId: string, name: string) =>
  findAccountDomain((normalized) => store.domain(accountId, normalized), name)

/** DNS writes act only on verified domains (domain/domains/account-domain.ts). */
export const requireVerifiedDomain = (domain: DmarcDomain): Result<null> =>
  requireVerifiedFor(domain, 'dmarc')

export interface DmarcState {
  domain: DmarcDomain
  published: DmarcDiscovery
  delegation: Delegation
  hosted: HostedDmarcView | null
}

export async function getDmarc(
  deps: Pick<HostingDeps, 'store' | 'dns'>,
  input: { accountId: string; name: string },
): Promise<Result<DmarcState>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const hosted = await deps.store.get(input.accountId, domain.id)
  // The resolver follows the CNAME: with the delegation in place this is the hosted record.
  const [published, delegation] = await Promise.all([
    discoverDmarc({ dns: deps.dns }, domain.name),
    delegationOf(deps.dns, domain.name, hosted),
  ])
  return ok({ domain, published, delegation, hosted: hosted === null ? null : hostedView(hosted) })
}

export interface HostingResult {
  domain: string
  changed: boolean
  hosted: HostedDmarcView
  cname: CnameToPublish
  /** Parser remarks on the hosted record, and a note when it sends no reports to the account. */
  warnings: string[]
}

const warningsOf = (findings: DmarcFinding[], record: string, address: string) => [
  ...findings.filter((f) => f.severity !== 'info').map((f) => f.message),
  ...(reportsTo(record, address)
    ? []
    : [
        `rua does not include mailto:${address}: without aggregate reports here, policy progression has nothing to decide from.`,
      ]),
]

/**
 * Hosts the domain's DMARC record: `record`, or by default the domain's own published record (with
 * the account's report address added), or `v=DMARC1; p=none; rua=mailto:<address>`. Hosting an
 * already hosted domain with a record is an update; without one it changes nothing.
 */
export async function hostDmarc(
  deps: HostingDeps,
  input: { accountId: string; name: string; record?: string; actor: string },
): Promise<Result<HostingResult>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const verified = requireVerifiedDomain(domain)
  if (!verified.ok) return verified
  const address = await deps.reportAddress(input.accountId)
  const current = await deps.store.get(input.accountId, domain.id)
  if (current !== null) {
    if (input.record !== undefined) return updateHosted(deps, input, domain, current, address)
    return ok(resultOf(domain, current, false, [], address))
  }
  let text = input.record
  if (text === undefined) {
    const published = await discoverDmarc({ dns: deps.dns }, domain.name)
    const own = published.policyRole === 'author_domain' ? published.rawRecord : null
    text = defaultHostedRecord(own, address)
  }
  const checked = validateHostedRecord(text)
  if (!checked.ok) return checked
  const allowed = await deps.dnsWrites(input.accountId)
  if (!allowed.ok) return allowed
  const { hosted, created } = await deps.store.host(input.accountId, {
    domainId: domain.id,
    domainName: domain.name,
    record: checked.value.record,
    actor: input.actor,
    at: deps.now(),
  })
  return ok(resultOf(domain, hosted, created, checked.value.findings, address))
}

/** Replaces the hosted record (PUT); 404 `not_found` when the domain's record is not hosted. */
export async function updateDmarc(
  deps: HostingDeps,
  input: { accountId: string; name: string; record: string; actor: string },
): Promise<Result<HostingResult>> {
  const found = await findDmarcDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const verified = requireVerifiedDomain(domain)
  if (!verified.ok) return verified
  const current = await deps.store.get(input.accountId, domain.id)
  if (current === null) return fail({ code: 'not_found', resource: 'hosted DMARC record' })
  return updateHosted(deps, input, domain, current, await deps.reportAddress(input.accountId))
}

async function updateHosted(
  deps: HostingDeps,
  input: { accountId: string; record?: string; actor: string },
  domain: DmarcDomain,
  current: HostedDmarc,
  address: string,
): Promise<Result<HostingResult>> {
  const checked = validateHostedRecord(input.record ?? '')
  if (!checked.ok) return checked
  const { record, level, findings } = checked.value
  if (record === current.record) return ok(resultOf(domain, current, false, findings, address))
  const allowed = await deps.dnsWrites(input.accountId)
  if (!allowed.ok) return allowed
  const before = hostedView(current)
  const policyChanged = before.policy !== level.policy || (before.pct ?? 100) !== (level.pct ?? 100)
  const updated = await deps.store.update(input.accountId, {
    domainId: domain.id,
    record,
    actor: input.actor,
    reason: policyChanged ? `edited: ${describeLevel(before)} → ${describeLevel(level)}` : 'edited',
    at: deps.now(),
    policyChange: policyChanged
      ? { from: { policy: before.policy, pct: before.pct }, to: level, fromRecord: current.record }
      : null,
  })
  if (updated === null) return fail({ code: 'not_found', resource: 'hosted DMARC record' })
  return ok(resultOf(domain, updated, true, findings, address))
}

function resultOf(
  domain: DmarcDomain,
  hosted: HostedDmarc,
  changed: boolean,
  findings: DmarcFinding[],
  address: string,
): HostingResult {
  return {
    domain: domain.name,
    changed,
    hosted: hostedView(hosted),
    cname: cnameToPublish(domain.name, hosted.name),
    warnings: warningsOf(findings, hosted.record, address),
  }
}
