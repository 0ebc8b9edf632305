// SPF management of a domain (issue #5): read the published record and the managed one, activate
// management, change its settings, list versions and roll back. Adding sources and detecting them
// from reports are in source-use-cases.ts; the scheduled re-plan in reflatten.ts.

import { spfActivated } from '../events/event.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { analyzeSpf, type SpfAnalysis } from '../spf/analysis.ts'
import {
  commitChange,
  describeChange,
  findDomain,
  isNoChange,
  type ManagedView,
  planRecords,
  requireVerified,
  SAVE_ATTEMPTS,
  type SpfDeps,
  type SpfWriteDeps,
  viewOf,
} from './managed-change.ts'
import { domainLabel, hostedName, type ManagedSource, type ManagedSpfConfig } from './managed-record.ts'
import type { SpfDomain } from './ports.ts'
import { defaultAll, defaultSources, type PublishedSpf, readPublished } from './published-record.ts'
import { validateSources } from './sources.ts'
import { type ConfigDiff, diffConfigs, rollbackTo, type SpfVersion } from './spf-change.ts'

export interface SpfOverview {
  domain: SpfDomain
  published: PublishedSpf
  analysis: SpfAnalysis
  managed: ManagedView | null
}

/** The published record with its analysis and, when managed, what is served and what to publish. */
export async function getSpf(
  deps: SpfDeps,
  input: { accountId: string; name: string },
): Promise<Result<SpfOverview>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const [published, analysis, state] = await Promise.all([
    readPublished(deps.dns, domain.name),
    analyzeSpf({ dns: deps.dns }, { domain: domain.name }),
    deps.store.get(input.accountId, domain.id),
  ])
  const managed = state === null ? null : viewOf(state, published, deps, domain.name)
  return ok({ domain, published, analysis, managed })
}

export interface ActivateInput {
  accountId: string
  name: string
  actor: string
  sources?: ManagedSource[]
  all?: ManagedSpfConfig['all']
  flatten?: ManagedSpfConfig['flatten']
}

export interface ActivateResult {
  domain: string
  /** false: management was already active with these settings; nothing was written. */
  changed: boolean
  /** true on the first activation (the one that sends `spf.activated`). */
  activated: boolean
  view: ManagedView
  published: PublishedSpf
}

function normalizedConfig(config: ManagedSpfConfig, zone: string): Result<ManagedSpfConfig> {
  const sources = validateSources(config.sources, zone)
  return sources.ok ? ok({ ...config, sources: sources.value }) : sources
}

/**
 * Activates management of a verified domain. The default sources are the published record's own
 * (see `defaultSources`), so activation changes nobody's result. Activating again with no settings,
 * or the same ones, returns the current state and writes nothing; different settings are a new
 * version (no second `spf.activated`).
 */
export async function activate(deps: SpfWriteDeps, input: ActivateInput): Promise<Result<ActivateResult>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const verified = requireVerified(domain)
  if (!verified.ok) return verified
  let hashedLabel = false
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    const [current, published] = await Promise.all([
      deps.store.get(input.accountId, domain.id),
      readPublished(deps.dns, domain.name),
    ])
    const asked = input.sources !== undefined || input.all !== undefined || input.flatten !== undefined
    if (current !== null && !asked) {
      return ok({
        domain: domain.name,
        changed: false,
        activated: false,
        view: viewOf(current, published, deps, domain.name),
        published,
      })
    }
    // Default sources come from the published record: a record that cannot be read (DNS failure,
    // several records, a syntax error) gives none, and activating with none would drop every sender.
    const unreadable = published.status === 'temperror' || published.status === 'permerror'
    if (current === null && input.sources === undefined && unreadable) {
      return invalid(
        'sources',
        `The SPF record of ${domain.name} cannot be used (${published.reason}); fix it or try again, or give the sources.`,
      )
    }
    const config = normalizedConfig(
      {
        sources:
          input.sources ??
          current?.config.sources ??
          defaultSources(published.record, domain.name, deps.zone),
        all: input.all ?? current?.config.all ?? defaultAll(published.record),
        flatten: input.flatten ?? current?.config.flatten ?? 'auto',
      },
      deps.zone,
    )
    if (!config.ok) return config
    if (current !== null && isNoChange(diffConfigs(current.config, config.value))) {
      return ok({
        domain: domain.name,
        changed: false,
        activated: false,
        view: viewOf(current, published, deps, domain.name),
        published,
      })
    }
    // Labels are unique across accounts; a second account with the same (verified) name gets a
    // keyed label of its own rather than an error that would tell it about the first.
    let label = current?.label ?? domainLabel(domain.name)
    if (current === null && (hashedLabel || (await deps.store.labelTaken(label, domain.id)))) {
      label = domainLabel(domain.name, input.accountId)
    }
    const planned = await planRecords(deps, { domain: domain.name, label, config: config.value, published })
    if (!planned.ok) return planned
    const { records, publish } = planned.value
    const at = deps.now()
    const committed = await commitChange(deps, {
      accountId: input.accountId,
      domainId: domain.id,
      current,
      label,
      config: config.value,
      records,
      action: current === null ? 'spf.activate' : 'spf.update',
      reason:
        current === null ? 'activated' : `settings changed: ${describeChange(current.config, config.value)}`,
      actor: input.actor,
      event:
        current === null ? spfActivated(domain.name, publish.record, hostedName(label, deps.zone), at) : null,
    })
    if (!committed.ok) return committed
    const { outcome, state } = committed.value
    if (outcome === 'label_taken') hashedLabel = true
    if (outcome !== 'saved') continue
    return ok({
      domain: domain.name,
      changed: true,
      activated: current === null,
      view: { state, publish },
      published,
    })
  }
  throw new Error(`SPF activation of ${domain.name} kept conflicting with concurrent changes`)
}

export interface VersionEntry extends SpfVersion {
  /** What this version changed relative to the one before it (version 1: everything added). */
  changes: ConfigDiff
  current: boolean
}

/** Versions newest first, each with its change against its predecessor. */
export async function listVersions(
  deps: Pick<SpfDeps, 'store'>,
  input: { accountId: string; name: string; page: PageRequest },
): Promise<Result<Page<VersionEntry>>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const { id } = found.value
  const [page, state] = await Promise.all([
    deps.store.versions(input.accountId, id, input.page),
    deps.store.get(input.accountId, id),
  ])
  const oldest = page.items[page.items.length - 1]
  const before =
    oldest !== undefined && oldest.version > 1
      ? await deps.store.version(input.accountId, id, oldest.version - 1)
      : null
  const items = page.items.map((version, i) => {
    const previous = page.items[i + 1] ?? before
    return {
      ...version,
      changes: diffConfigs(previous?.config ?? null, version.config),
      current: version.version === state?.version,
    }
  })
  return ok({ items, total: page.total })
}

/** A new version serving exactly what `version` served (see `rollbackTo`). */
export async function rollback(
  deps: SpfWriteDeps,
  input: { accountId: string; name: string; version: number; actor: string },
): Promise<Result<{ domain: string; changed: boolean; view: ManagedView; published: PublishedSpf }>> {
  const found = await findDomain(deps.store, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    const current = await deps.store.get(input.accountId, domain.id)
    if (current === null) return fail({ code: 'not_found', resource: 'spf_version' })
    const verified = requireVerified(domain)
    if (!verified.ok) return verified
    const [target, latest, published] = await Promise.all([
      deps.store.version(input.accountId, domain.id, input.version),
      deps.store.version(input.accountId, domain.id, current.version),
      readPublished(deps.dns, domain.name),
    ])
    const history = [target, latest].filter((v): v is SpfVersion => v !== null)
    const rolled = rollbackTo(history, input.version, {
      actor: input.actor,
      createdAt: deps.now().toISOString(),
    })
    if (!rolled.ok) return rolled
    if (!rolled.value.changed) {
      return ok({
        domain: domain.name,
        changed: false,
        view: viewOf(current, published, deps, domain.name),
        published,
      })
    }
    const next = rolled.value.version
    const committed = await commitChange(deps, {
      accountId: input.accountId,
      domainId: domain.id,
      current,
      label: current.label,
      config: next.config,
      records: next.records,
      action: 'spf.rollback',
      reason: next.reason,
      actor: input.actor,
      event: null,
    })
    if (!committed.ok) return committed
    if (committed.value.outcome !== 'saved') continue
    const view = viewOf(committed.value.state, published, deps, domain.name)
    return ok({ domain: domain.name, changed: true, view, published })
  }
  throw new Error(`SPF rollback of ${domain.name} kept conflicting with concurrent changes`)
}
