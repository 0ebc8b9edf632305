// Domain import from a DNS provider (issue #7): every zone of a connection (or the ones asked for)
// becomes a domain of the account, and — since the service can write to the zone — the service
// publishes the domain's verification TXT itself and verifies it. One job per import, zone by
// zone, progress saved after each zone so a retried or resumed job carries on where it stopped.

import { type Domain, verificationRecord } from '../domains/domain.ts'
import { normalizeDomainName } from '../domains/domain-name.ts'
import type { DomainStore, OrganizationLookup } from '../domains/ports.ts'
import { addDomain } from '../domains/use-cases.ts'
import { type VerificationStore, verifyDomain } from '../domains/verification.ts'
import { showable } from '../shared/control-characters.ts'
import type { RandomBytes } from '../shared/random.ts'
import type { Result } from '../shared/result.ts'
import type { ProviderKind } from './credentials.ts'
import type { Zone } from './ports.ts'
import { normalizeName } from './record-set.ts'
import {
  type BuildProvider,
  type ConnectionStore,
  LABELS,
  type OpenProvider,
  type Target,
} from './use-cases.ts'
import { applyPlan, planSet, type WriteDeps } from './writes.ts'

export type ImportStatus = 'queued' | 'running' | 'done' | 'failed'

export interface ImportResult {
  zone: string
  /** The domain's name, when the zone was a usable domain name. */
  domain: string | null
  status: 'imported' | 'skipped' | 'failed'
  /** `exists` for a domain already in the account; otherwise why, in words. Null when imported. */
  reason: string | null
  verified: boolean
}

export interface DomainImport {
  id: string
  accountId: string
  connectionId: string
  provider: ProviderKind
  status: ImportStatus
  zonesRequested: string[] | null
  results: ImportResult[]
  /** Zones to handle, known once the provider listed them. */
  total: number | null
  imported: number
  skipped: number
  failed: number
  error: string | null
  createdAt: Date
  startedAt: Date | null
  finishedAt: Date | null
}

export interface ImportStore {
  /** A queued import, and its job enqueued in the same transaction. */
  create(
    accountId: string,
    input: { connectionId: string; zones: string[] | null; now: Date },
  ): Promise<DomainImport>
  get(accountId: string, id: string): Promise<DomainImport | null>
  /** For the job, which has only the import id. */
  load(id: string): Promise<DomainImport | null>
  start(id: string, total: number, at: Date): Promise<void>
  /** Appends one zone's result and counts it. */
  record(id: string, result: ImportResult): Promise<void>
  finish(id: string, status: 'done' | 'failed', error: string | null, at: Date): Promise<void>
}

export interface ImportDeps extends WriteDeps {
  imports: ImportStore
  connections: ConnectionStore
  open: OpenProvider
  domains: DomainStore
  /** Marks imported domains verified (and re-queues reports that waited for them). */
  verifications: VerificationStore
  organizations: OrganizationLookup
  random: RandomBytes
  /** One DNS write against the account's limit (docs/api.md "Authentication and limits"): refused → the import pauses. */
  dnsWrites: (accountId: string) => Promise<Result<null>>
}

/** What the DNS provider use cases take together (connections, imports, writes), built once per process. */
export interface ProviderDeps extends Omit<ImportDeps, 'verifications' | 'random'> {
  build: BuildProvider
}

export type ImportRun = { kind: 'finished' } | { kind: 'paused'; retryAfter: number }

export const MAX_IMPORT_ZONES = 500
/** Short, so a record that turned out wrong is soon forgotten by resolvers. */
const VERIFICATION_TTL = 300

/** The zones to handle, in order: the ones asked for (missing ones reported) or all of them. */
function targetsOf(zones: Zone[], requested: string[] | null): (Zone | { missing: string })[] {
  if (requested === null) return [...zones].sort((a, b) => a.name.localeCompare(b.name))
  return requested.map((name) => zones.find((z) => z.name === normalizeName(name)) ?? { missing: name })
}

/** Runs (or resumes) an import. `paused` when the account's DNS write limit is reached. */
export async function runImport(deps: ImportDeps, importId: string): Promise<ImportRun> {
  const job = await deps.imports.load(importId)
  if (job === null || job.status === 'done' || job.status === 'failed') return { kind: 'finished' }
  const stop = async (error: string) => {
    await deps.imports.finish(job.id, 'failed', error, deps.now())
    return { kind: 'finished' } as const
  }
  const connection = await deps.connections.get(job.accountId, job.connectionId)
  if (connection === null) return stop('The DNS provider connection was removed.')
  const opened = await deps.open(connection)
  if (!opened.ok) return stop(`${LABELS[connection.provider]}: ${opened.failure.message}`)
  const zones = await opened.value.listZones()
  if (!zones.ok) {
    const why =
      zones.failure.kind === 'bad_credentials'
        ? 'rejected the credentials; authenticate again'
        : zones.failure.message
    return stop(`${LABELS[connection.provider]} ${why}`)
  }
  const targets = targetsOf(zones.value, job.zonesRequested).slice(0, MAX_IMPORT_ZONES)
  await deps.imports.start(job.id, targets.length, deps.now())
  const handled = new Set(job.results.map((r) => r.zone))

  for (const target of targets) {
    // A provider's zone name is shown as it came when it is refused below: without its controls.
    const zoneName = showable('missing' in target ? normalizeName(target.missing) : target.name)
    if (handled.has(zoneName)) continue
    const result = (
      status: ImportResult['status'],
      reason: string | null,
      domain: string | null = null,
      verified = false,
    ) => deps.imports.record(job.id, { zone: zoneName, domain, status, reason, verified })
    if ('missing' in target) {
      await result(
        'failed',
        `${LABELS[connection.provider]} has no zone ${zoneName} (or the credentials cannot see it).`,
      )
      continue
    }
    // Reverse zones are DNS, not mail domains.
    if (zoneName === 'arpa' || zoneName.endsWith('.arpa')) {
      await result('skipped', 'a reverse zone, not a mail domain')
      continue
    }
    const name = normalizeDomainName(zoneName)
    if (!name.ok) {
      await result('failed', name.reason)
      continue
    }
    const existing = await deps.domains.get(job.accountId, name.name)
    if (existing !== null) {
      await result('skipped', 'exists', name.name, existing.verifiedAt !== null)
      continue
    }
    // The limit is taken before the domain is created, so a paused import never leaves a domain
    // without its verification record (which, on resume, would read as "already there").
    const gate = await deps.dnsWrites(job.accountId)
    if (!gate.ok)
      return {
        kind: 'paused',
        retryAfter: gate.failure.code === 'rate_limited' ? gate.failure.retryAfter : 60,
      }
    const added = await addDomain(deps, { accountId: job.accountId, domainName: name.name })
    if (!added.ok) {
      await result('failed', messageOf(added.failure), name.name)
      continue
    }
    const note = await publishVerification(
      deps,
      { connection, provider: opened.value, zone: target },
      added.value,
      job.accountId,
    )
    const verified = note === null
    await result('imported', note, name.name, verified)
  }
  await deps.imports.finish(job.id, 'done', null, deps.now())
  return { kind: 'finished' }
}

/**
 * Writes `_dmarcwatch.<domain>` through the provider (keeping values already there: other accounts
 * may verify the same domain) and verifies the domain the way POST /domains/{name}/verify does.
 * Null when verified, else why not (the periodic verification job keeps trying).
 */
async function publishVerification(
  deps: ImportDeps,
  target: Target,
  domain: Domain,
  accountId: string,
): Promise<string | null> {
  const { txtName, txtValue } = verificationRecord(domain)
  const set = { name: txtName, type: 'TXT', ttl: VERIFICATION_TTL, values: [txtValue] }
  const plan = await planSet(target, domain.name, set, { keep: () => true })
  if (!plan.ok) return `the verification record could not be planned: ${messageOf(plan.failure)}`
  if (plan.value.changed) {
    const reason = 'domain import: ownership verification record'
    const write = await applyPlan(deps, plan.value, { accountId, actor: 'system', reason })
    if (!write.ok) return `the verification record could not be written: ${messageOf(write.failure)}`
    if (write.value.status !== 'verified')
      return `the verification record was written but ${write.value.error ?? 'not confirmed'}`
  }
  const check = await verifyDomain(deps, { accountId, name: domain.name, now: deps.now() })
  if (!check.ok) return check.failure.code
  return check.value.check.verified ? null : check.value.check.message
}

function messageOf(failure: { code: string; message?: string }): string {
  return failure.message ?? failure.code
}
