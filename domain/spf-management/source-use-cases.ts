// Sources into SPF: add one sending IP of a domain (as its service's include, or the address), and
// detect the legitimate senders that fail SPF alignment from the last 30 days of reports, applying
// them when the domain's automation level is `automatic` (docs/api.md).

import type { AutomationLevel } from '../domains/domain.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { branchLookups, resolveSpfTree } from '../spf/include-tree.ts'
import { inNetwork, parseIp, unmapIpv4 } from '../spf/ip.ts'
import { MAX_DNS_TERMS } from '../spf/limits.ts'
import { overlaySpfRecord } from '../spf/overlay-resolver.ts'
import {
  commitChange,
  findDomain,
  type ManagedView,
  planRecords,
  requireVerified,
  SAVE_ATTEMPTS,
  type SpfWriteDeps,
  viewOf,
} from './managed-change.ts'
import type { ManagedSource } from './managed-record.ts'
import type { SourceActivityReader } from './ports.ts'
import { defaultSources, type PublishedSpf, readPublished, recordWithSource } from './published-record.ts'
import {
  addressSource,
  chooseSource,
  proposeSources,
  type ServiceRef,
  type SourceProposal,
} from './source-detection.ts'
import { normalizeSource, sourceKey, sourceTerm } from './sources.ts'
import { addSource } from './spf-change.ts'
import type { UserRecord } from './user-record.ts'

export interface SourceDeps extends SpfWriteDeps {
  activity: SourceActivityReader
}

export const DETECTION_DAYS = 30
export const SOURCE_DAYS = 90

/** YYYY-MM-DD of the first day of the last `days` days, from the caller's clock (UTC). */
export function windowStart(now: Date, days: number): string {
  return new Date(now.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10)
}

export interface AddSourceInput {
  accountId: string
  name: string
  /** The source IP, as in the sources list. */
  ip: string
  /** Overrides: authorise this include, or this network (which must hold the IP), instead. */
  include?: string
  network?: string
  actor: string
}

export interface AddSourceResult {
  domain: string
  source: ManagedSource
  service: ServiceRef | null
  /** false: the source was already authorised; nothing was written. */
  changed: boolean
  /** Managed: the state after the change. Unmanaged: null, and `publish` is the record to publish. */
  managed: ManagedView | null
  publish: UserRecord
  published: PublishedSpf
}

function overrideSource(input: AddSourceInput, zone: string): Result<ManagedSource | null> {
  if (input.include !== undefined && input.network !== undefined) {
    return invalid('include', 'Give include or network, not both.')
  }
  if (input.include !== undefined) {
    const checked = normalizeSource({ kind: 'include', domain: input.include }, zone)
    return checked.ok ? ok(checked.source) : invalid('include', checked.message)
  }
  if (input.network === undefined) return ok(null)
  const address = parseIp(input.network.split('/')[0]!.trim())
  const kind = address?.family === 6 ? 'ip6' : 'ip4'
  const checked = normalizeSource({ kind, network: input.network }, zone)
  if (!checked.ok) return invalid('network', checked.message)
  const ip = unmapIpv4(parseIp(input.ip)!)
  const [net, prefix] = (checked.source as { network: string }).network.split('/')
  const base = parseIp(net!)!
  const bits = prefix === undefined ? base.bytes.length * 8 : Number(prefix)
  if (base.family !== ip.family || !inNetwork(ip, base, bits)) {
    return invalid('network', `${input.network} does not hold the source ${input.ip}.`)
  }
  return ok(checked.source)
}

/** A planning refusal of the added source (`sources[i].domain`), named by the request's field. */
function asRequestField<T>(result: Result<T>, index: number, input: AddSourceInput): Result<T> {
  if (result.ok || result.failure.code !== 'validation_failed') return result
  const prefix = `sources[${index}].`
  const field = input.include !== undefined ? 'include' : input.network !== undefined ? 'network' : 'source'
  const errors = Object.fromEntries(
    Object.entries(result.failure.errors).map(([key, messages]) => [
      key.startsWith(prefix) ? field : key,
      messages,
    ]),
  )
  const message = result.failure.message.startsWith(prefix)
    ? `${field}${result.failure.message.slice(result.failure.message.indexOf(':'))}`
    : result.failure.message
  return fail({ ...result.failure, message, errors })
}

/** The lookups an unmanaged domain's record would cost with the new term: refused over 10. */
export async function checkUnmanaged(
  deps: SourceDeps,
  domain: string,
  proposal: UserRecord,
): Promise<Result<UserRecord>> {
  if (!proposal.changed) return ok(proposal)
  const tree = await resolveSpfTree({ dns: overlaySpfRecord(deps.dns, domain, proposal.record) }, domain)
  const lookups = branchLookups(tree)
  if (lookups > MAX_DNS_TERMS)
    return fail({ code: 'spf_lookup_limit_exceeded', lookups, limit: MAX_DNS_TERMS })
  return ok({ ...proposal, lookups })
}

/**
 * Authorises one source IP of a domain. Managed: a new version with the source (verified domains
 * only; a source already there changes nothing). Unmanaged: nothing is written; the answer is the
 * domain's record with the term added, refused when it would pass 10 DNS lookups.
 */
export async function addSourceToSpf(
  deps: SourceDeps,
  input: AddSourceInput,
): Promise<Result<AddSourceResult>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const address = addressSource(input.ip)
  if (address === null) return invalid('source', `'${input.ip}' is not an IP address.`)
  const ip = (address as { network: string }).network
  const override = overrideSource({ ...input, ip }, deps.zone)
  if (!override.ok) return override
  // A source is an IP that sent for the domain in the last 90 days, as in the sources list.
  const since = windowStart(deps.now(), SOURCE_DAYS)
  const activity = await deps.activity.one(input.accountId, domain.id, ip, since)
  if (activity === null) return fail({ code: 'not_found', resource: 'source' })
  const chosen = chooseSource(activity, domain.name)
  const source = override.value ?? chosen?.source ?? address
  const service = chosen?.service ?? null
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    const [current, published] = await Promise.all([
      deps.store.get(input.accountId, domain.id),
      readPublished(deps.dns, domain.name),
    ])
    if (current === null) {
      // No edit of a record that cannot be read, nor a new one replacing several.
      if (
        published.status === 'temperror' ||
        (published.status === 'permerror' && published.record === null)
      ) {
        return invalid('source', `The SPF record of ${domain.name} cannot be used: ${published.reason}.`)
      }
      const checked = await checkUnmanaged(deps, domain.name, recordWithSource(published.record, source))
      if (!checked.ok) return checked
      return ok({
        domain: domain.name,
        source,
        service,
        changed: checked.value.changed,
        managed: null,
        publish: checked.value,
        published,
      })
    }
    const added = addSource(current.config, source, deps.zone)
    if (!added.ok) return added
    if (!added.value.changed) {
      const view = viewOf(current, published, deps, domain.name)
      return ok({
        domain: domain.name,
        source,
        service,
        changed: false,
        managed: view,
        publish: view.publish,
        published,
      })
    }
    const verified = requireVerified(domain)
    if (!verified.ok) return verified
    const config = added.value.config
    const planned = await planRecords(deps, { domain: domain.name, label: current.label, config, published })
    if (!planned.ok) return asRequestField(planned, config.sources.length - 1, input)
    const committed = await commitChange(deps, {
      accountId: input.accountId,
      domainId: domain.id,
      current,
      label: current.label,
      config,
      records: planned.value.records,
      action: 'spf.add_source',
      reason: `added ${sourceTerm(source)}${service ? ` (${service.name})` : ''} for source ${ip}`,
      actor: input.actor,
      event: null,
    })
    if (!committed.ok) return committed
    if (committed.value.outcome !== 'saved') continue
    const managed = { state: committed.value.state, publish: planned.value.publish }
    return ok({
      domain: domain.name,
      source,
      service,
      changed: true,
      managed,
      publish: managed.publish,
      published,
    })
  }
  throw new Error(
    `adding a source to the SPF record of ${domain.name} kept conflicting with concurrent changes`,
  )
}

export interface DetectResult {
  domain: string
  /** First day of the period looked at (YYYY-MM-DD). */
  since: string
  proposals: SourceProposal[]
  /** true when the proposals were applied as a new version (automatic, managed, verified). */
  applied: boolean
  automationLevel: AutomationLevel
  managed: ManagedView | null
  published: PublishedSpf
}

/**
 * Legitimate-looking senders failing SPF alignment over the last 30 days, as proposals with their
 * volumes. Applied only for `automatic` domains that are managed (and so verified); `assisted` and
 * `manual` domains get the proposals to approve with add-to-spf.
 */
export async function detectSources(
  deps: SourceDeps,
  input: { accountId: string; name: string; actor: string },
): Promise<Result<DetectResult>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const since = windowStart(deps.now(), DETECTION_DAYS)
  const activities = await deps.activity.recent(input.accountId, domain.id, since)
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    const [current, published] = await Promise.all([
      deps.store.get(input.accountId, domain.id),
      readPublished(deps.dns, domain.name),
    ])
    const present = current?.config.sources ?? defaultSources(published.record, domain.name, deps.zone)
    const proposals = proposeSources(activities, domain.name, new Set(present.map(sourceKey)))
    const result = {
      domain: domain.name,
      since,
      proposals,
      automationLevel: domain.automationLevel,
      published,
    }
    const apply = current !== null && domain.automationLevel === 'automatic' && proposals.length > 0
    if (!apply) {
      const managed = current === null ? null : viewOf(current, published, deps, domain.name)
      return ok({ ...result, applied: false, managed })
    }
    const verified = requireVerified(domain)
    if (!verified.ok) return verified
    let config = current.config
    for (const proposal of proposals) {
      const added = addSource(config, proposal.source, deps.zone)
      if (!added.ok) return added
      config = added.value.config
    }
    const planned = await planRecords(deps, { domain: domain.name, label: current.label, config, published })
    if (!planned.ok) return planned
    const committed = await commitChange(deps, {
      accountId: input.accountId,
      domainId: domain.id,
      current,
      label: current.label,
      config,
      records: planned.value.records,
      action: 'spf.detect_sources',
      reason: 'detected sources',
      actor: input.actor,
      event: null,
    })
    if (!committed.ok) return committed
    if (committed.value.outcome !== 'saved') continue
    const managed = { state: committed.value.state, publish: planned.value.publish }
    return ok({ ...result, applied: true, managed })
  }
  throw new Error(`applying detected sources to ${domain.name} kept conflicting with concurrent changes`)
}
