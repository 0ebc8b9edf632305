// Writes through a DNS provider (issue #7): a record set is planned (the diff against what the
// provider holds: the dry run), applied, read back from the provider and over real DNS, recorded
// with an audit entry, and can be rolled back to what it replaced.

import type { Domain } from '../domains/domain.ts'
import type { DomainStore } from '../domains/ports.ts'
import { getDomain } from '../domains/use-cases.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import type { ProviderKind } from './credentials.ts'
import type { RecordSet } from './ports.ts'
import { confirm, type ReadBackDeps, sameValues } from './read-back.ts'
import { checkRecordSet, isInZone, normalizeName } from './record-set.ts'
import {
  type ConnectionStore,
  type OpenProvider,
  type Outcome,
  providerFailure,
  type Target,
  zoneFor,
} from './use-cases.ts'

export type WriteStatus = 'planned' | 'applied' | 'verified' | 'failed' | 'rolled_back'

export interface ProviderWrite {
  id: string
  accountId: string
  domain: string
  /** Null once the connection is removed (the write stays in the log). */
  connectionId: string | null
  provider: ProviderKind
  zone: { id: string; name: string }
  name: string
  type: string
  before: RecordSet | null
  after: RecordSet
  status: WriteStatus
  /** Why it failed, or a note (not yet visible over DNS, a failed rollback attempt). */
  error: string | null
  actor: string
  createdAt: Date
  appliedAt: Date | null
  verifiedAt: Date | null
  rolledBackAt: Date | null
}

export type WriteChange = Partial<
  Pick<ProviderWrite, 'status' | 'error' | 'appliedAt' | 'verifiedAt' | 'rolledBackAt'>
>

export interface AuditEntry {
  action: 'dns_provider.write' | 'dns_provider.rollback'
  actor: string
  reason: string
  before: RecordSet | null
  after: RecordSet | null
  at: Date
}

/** Scoped by account. `change` and its audit row are one transaction. */
export interface WriteStore {
  insert(
    write: Omit<ProviderWrite, 'id' | 'status' | 'error' | 'appliedAt' | 'verifiedAt' | 'rolledBackAt'>,
  ): Promise<ProviderWrite>
  change(accountId: string, id: string, change: WriteChange, audit?: AuditEntry): Promise<ProviderWrite>
  get(accountId: string, id: string): Promise<ProviderWrite | null>
  list(accountId: string, page: PageRequest): Promise<Page<ProviderWrite>>
}

export interface WriteDeps extends ReadBackDeps {
  writes: WriteStore
  now: () => Date
}

export interface Plan {
  domain: string
  target: Target
  before: RecordSet | null
  after: RecordSet
  changed: boolean
}

export const DEFAULT_TTL = 3600

export function diffSets(before: RecordSet | null, after: RecordSet | null) {
  const was = before?.values ?? []
  const will = after?.values ?? []
  return {
    added: will.filter((v) => !was.includes(v)),
    removed: was.filter((v) => !will.includes(v)),
    ttl: before?.ttl === after?.ttl ? null : { before: before?.ttl ?? null, after: after?.ttl ?? null },
  }
}

export interface PlanOptions {
  /**
   * Values of the current set to keep beside the planned ones: the verification TXT keeps every
   * value (several accounts may verify one domain, each with its own), the SPF record at an apex
   * keeps every TXT value that is not SPF (site verifications and the like live in the same RRset).
   */
  keep?: (value: string) => boolean
  /**
   * A type the planned set takes the place of at the same name: a CNAME replaces the TXT at
   * `_dmarc.<domain>` (nothing else may sit beside a CNAME, RFC 1034 §3.6.2). The set of that type
   * becomes `before`, so the diff shows it, applying removes it and a rollback restores it.
   */
  replacesType?: string
  /** Keep the current set's TTL (a record the user published keeps theirs). */
  keepTtl?: boolean
}

async function readSet(target: Target, name: string, type: string): Promise<Outcome<RecordSet | null>> {
  const read = await target.provider.readRecords(target.zone, { name, type })
  if (!read.ok) return { ok: false, failure: providerFailure(target.connection.provider, read.failure) }
  return ok(read.value[0] ?? null)
}

/** The set planned in `target`'s zone and the set it replaces. */
export async function planSet(
  target: Target,
  domain: string,
  set: RecordSet,
  options: PlanOptions = {},
): Promise<Outcome<Plan>> {
  const checked = checkRecordSet(target.zone.name, set)
  if (!checked.ok) return invalid(checked.field, checked.message)
  const { name, type } = checked.value
  const current = await readSet(target, name, type)
  if (!current.ok) return current
  let before = current.value
  if (before === null && options.replacesType !== undefined && options.replacesType !== type) {
    const other = await readSet(target, name, options.replacesType)
    if (!other.ok) return other
    before = other.value
  }
  let after = checked.value
  if (options.keepTtl && before !== null && before.type === type) after = { ...after, ttl: before.ttl }
  const { keep } = options
  if (keep !== undefined && before !== null && before.type === type) {
    const kept = before.values.filter(keep)
    after = { ...after, values: [...kept, ...after.values.filter((v) => !kept.includes(v))] }
  }
  const changed =
    before === null ||
    before.type !== type ||
    before.ttl !== after.ttl ||
    !sameValues(before.values, after.values)
  return ok({ domain, target, before, after, changed })
}

export interface WriteInput {
  accountId: string
  domain: string
  name: string
  type: string
  values: string[]
  ttl?: number
}

/** Plans a write at a verified domain of the account, in the connected zone that holds it. */
export async function planWrite(
  deps: { domains: DomainStore; connections: ConnectionStore; open: OpenProvider },
  input: WriteInput,
): Promise<Outcome<Plan>> {
  const found = await getDomain(deps, input.accountId, input.domain)
  if (!found.ok) return found
  const domain: Domain = found.value
  if (domain.verifiedAt === null)
    return fail({
      code: 'forbidden',
      message: `Verify ${domain.name} (POST /domains/${domain.name}/verify) before writing its DNS records.`,
    })
  const name = normalizeName(input.name)
  if (!isInZone(name, domain.name))
    return invalid('name', `${name} is not ${domain.name} or a name under it.`)
  const target = await zoneFor(deps, input.accountId, domain.name)
  if (!target.ok) return target
  if (target.value === null)
    return invalid(
      'domain',
      `No connected DNS provider holds a zone for ${domain.name}. Connect one with POST /dns-providers/authenticate.`,
    )
  const set = { name, type: input.type, ttl: input.ttl ?? DEFAULT_TTL, values: input.values }
  return planSet(target.value, domain.name, set)
}

/**
 * Applies a plan: recorded as planned, written, recorded as applied with its audit entry, read
 * back. `verified` when the provider and DNS both show it; `applied` with a note when DNS does not
 * yet; `failed` when the provider refused it or holds something else.
 */
export async function applyPlan(
  deps: WriteDeps,
  plan: Plan,
  input: { accountId: string; actor: string; reason: string },
): Promise<Outcome<ProviderWrite>> {
  const { target, after } = plan
  const write = await deps.writes.insert({
    accountId: input.accountId,
    domain: plan.domain,
    connectionId: target.connection.id,
    provider: target.connection.provider,
    zone: target.zone,
    name: after.name,
    type: after.type,
    before: plan.before,
    after,
    actor: input.actor,
    createdAt: deps.now(),
  })
  // A set of another type at the name (the TXT a CNAME replaces) goes first: providers refuse a
  // CNAME beside other data. Not atomic across the two calls; the gap is one request long.
  const cleared =
    plan.before !== null && plan.before.type !== after.type
      ? await target.provider.deleteRecordSet(target.zone, after.name, plan.before.type)
      : ({ ok: true, value: undefined } as const)
  const written = cleared.ok ? await target.provider.upsertRecordSet(target.zone, after) : cleared
  if (!written.ok) {
    await deps.writes.change(input.accountId, write.id, { status: 'failed', error: written.failure.message })
    const failure = providerFailure(target.connection.provider, written.failure)
    return {
      ok: false,
      failure: failure.code === 'dns_provider_error' ? { ...failure, writeId: write.id } : failure,
    }
  }
  const appliedAt = deps.now()
  const audit: AuditEntry = {
    action: 'dns_provider.write',
    actor: input.actor,
    reason: input.reason,
    before: plan.before,
    after,
    at: appliedAt,
  }
  await deps.writes.change(input.accountId, write.id, { status: 'applied', appliedAt }, audit)
  const problem = await confirm(deps, target, after.name, after.type, after)
  const change: WriteChange =
    problem === null
      ? { status: 'verified', verifiedAt: deps.now() }
      : problem.stage === 'provider'
        ? { status: 'failed', error: problem.message }
        : { error: problem.message }
  return ok(await deps.writes.change(input.accountId, write.id, change))
}

const writeNotFound = () => fail<never>({ code: 'not_found', resource: 'DNS provider write' })

/**
 * Restores what a write replaced (deletes the set when there was none), if the provider still holds
 * what the write put there: a set changed since is not overwritten with older data.
 */
export async function rollbackWrite(
  deps: WriteDeps & {
    domains: DomainStore
    connections: ConnectionStore
    open: OpenProvider
    dnsWrites: (accountId: string) => Promise<Result<null>>
  },
  input: { accountId: string; id: string; actor: string },
): Promise<Outcome<ProviderWrite>> {
  const write = await deps.writes.get(input.accountId, input.id)
  if (write === null) return writeNotFound()
  if (write.status === 'rolled_back') return invalid('id', 'This write was already rolled back.')
  if (write.appliedAt === null)
    return invalid('id', 'This write was never applied: there is nothing to roll back.')
  const domain = await getDomain(deps, input.accountId, write.domain)
  if (!domain.ok) return domain
  const connection =
    write.connectionId === null ? null : await deps.connections.get(input.accountId, write.connectionId)
  if (connection === null)
    return invalid(
      'id',
      'The DNS provider connection of this write was removed: connect it again and write the record.',
    )
  const opened = await deps.open(connection)
  if (!opened.ok) return { ok: false, failure: providerFailure(connection.provider, opened.failure) }
  const target: Target = { connection, provider: opened.value, zone: write.zone }
  const current = await target.provider.readRecords(target.zone, { name: write.name, type: write.type })
  if (!current.ok) return { ok: false, failure: providerFailure(connection.provider, current.failure) }
  const held = current.value[0]?.values ?? []
  if (!sameValues(held, write.after.values))
    return invalid(
      'id',
      `The record set changed since this write (it now holds ${JSON.stringify(held)}); write it again instead.`,
    )
  const gate = await deps.dnsWrites(input.accountId)
  if (!gate.ok) return gate
  const { before } = write
  // A write that replaced another type (CNAME for TXT) is undone by removing its set first.
  const removed =
    before === null || before.type !== write.type
      ? await target.provider.deleteRecordSet(target.zone, write.name, write.type)
      : ({ ok: true, value: undefined } as const)
  const restored =
    before === null || !removed.ok ? removed : await target.provider.upsertRecordSet(target.zone, before)
  if (!restored.ok) {
    await deps.writes.change(input.accountId, write.id, {
      error: `rollback failed: ${restored.failure.message}`,
    })
    const failure = providerFailure(connection.provider, restored.failure)
    return {
      ok: false,
      failure: failure.code === 'dns_provider_error' ? { ...failure, writeId: write.id } : failure,
    }
  }
  const problem = await confirm(deps, target, write.name, before?.type ?? write.type, before)
  const rolledBackAt = deps.now()
  const audit: AuditEntry = {
    action: 'dns_provider.rollback',
    actor: input.actor,
    reason: `rollback of write ${write.id}`,
    before: write.after,
    after: write.before,
    at: rolledBackAt,
  }
  const change: WriteChange = { status: 'rolled_back', rolledBackAt, error: problem?.message ?? null }
  return ok(await deps.writes.change(input.accountId, write.id, change, audit))
}
