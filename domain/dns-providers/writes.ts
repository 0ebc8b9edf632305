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
import { isInZone, normalizeName, validateRecordSet } from './record-set.ts'
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

/**
 * The set planned in `target`'s zone and the set it replaces. `merge` keeps the values already
 * there (the verification TXT: several accounts may verify one domain, each with its own value).
 */
export async function planSet(
  target: Target,
  domain: string,
  set: RecordSet,
  options: { merge?: boolean } = {},
): Promise<Outcome<Plan>> {
  const checked = validateRecordSet(target.zone.name, set)
  if (!checked.ok) return invalid('values', checked.failure.message)
  const read = await target.provider.readRecords(target.zone, {
    name: checked.value.name,
    type: checked.value.type,
  })
  if (!read.ok) return { ok: false, failure: providerFailure(target.connection.provider, read.failure) }
  const before = read.value[0] ?? null
  let after = checked.value
  if (options.merge && before !== null) {
    const values = [...before.values, ...after.values.filter((v) => !before.values.includes(v))]
    after = { ...after, values }
  }
  const changed = before === null || before.ttl !== after.ttl || !sameValues(before.values, after.values)
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
  const written = await target.provider.upsertRecordSet(target.zone, after)
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
  const restored =
    write.before === null
      ? await target.provider.deleteRecordSet(target.zone, write.name, write.type)
      : await target.provider.upsertRecordSet(target.zone, write.before)
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
  const problem = await confirm(deps, target, write.name, write.type, write.before)
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
