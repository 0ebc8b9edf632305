// Changes to a managed SPF record as versions: every change, a rollback included, appends a new
// version with who made it and why, so what was served at any time can be told and restored.
// Pure: the caller passes the time and stores the history.

import { fail, ok, type Result } from '../shared/result.ts'
import type { HostedRecords, ManagedSpfConfig } from './managed-record.ts'
import { type ManagedSource, normalizeSource, sourceFailure, sourceKey } from './sources.ts'

export interface SpfVersion {
  /** 1, 2, 3, … per domain. */
  version: number
  config: ManagedSpfConfig
  /** What was served for this version: flattened networks are a snapshot of that time. */
  records: HostedRecords
  reason: string
  actor: string
  /** ISO 8601, from the caller's clock. */
  createdAt: string
}

export interface ConfigDiff {
  added: ManagedSource[]
  removed: ManagedSource[]
  /** Settings that changed besides the sources. */
  settings: ('all' | 'flatten')[]
}

export interface ConfigChange {
  config: ManagedSpfConfig
  /** false: the change was already in place and `config` is the one given. */
  changed: boolean
}

/** Sources compare by their canonical term: labels and service ids are descriptions, not identity. */
export function diffConfigs(before: ManagedSpfConfig | null, after: ManagedSpfConfig): ConfigDiff {
  const beforeSources = before?.sources ?? []
  const had = new Set(beforeSources.map(sourceKey))
  const has = new Set(after.sources.map(sourceKey))
  const settings: ConfigDiff['settings'] = []
  if (before !== null && before.all !== after.all) settings.push('all')
  if (before !== null && before.flatten !== after.flatten) settings.push('flatten')
  return {
    added: after.sources.filter((s) => !had.has(sourceKey(s))),
    removed: beforeSources.filter((s) => !has.has(sourceKey(s))),
    settings,
  }
}

/** Appends a valid source; one already present (in any spelling) leaves the config unchanged. */
export function addSource(
  config: ManagedSpfConfig,
  source: ManagedSource,
  zone: string,
): Result<ConfigChange> {
  const checked = normalizeSource(source, zone)
  if (!checked.ok) return sourceFailure({ [`source.${checked.field}`]: [checked.message] })
  const key = sourceKey(checked.source)
  if (config.sources.some((s) => sourceKey(s) === key)) return ok({ config, changed: false })
  return ok({ config: { ...config, sources: [...config.sources, checked.source] }, changed: true })
}

/** Removes a source in any spelling; an absent one leaves the config unchanged. */
export function removeSource(config: ManagedSpfConfig, source: ManagedSource): ConfigChange {
  const key = sourceKey(source)
  const sources = config.sources.filter((s) => sourceKey(s) !== key)
  return sources.length === config.sources.length
    ? { config, changed: false }
    : { config: { ...config, sources }, changed: true }
}

export function latestVersion(history: readonly SpfVersion[]): SpfVersion | null {
  return history.reduce<SpfVersion | null>(
    (latest, v) => (latest === null || v.version > latest.version ? v : latest),
    null,
  )
}

/** The version that follows the history (1 for an empty one). */
export function nextVersion(history: readonly SpfVersion[], change: Omit<SpfVersion, 'version'>): SpfVersion {
  return { ...change, version: (latestVersion(history)?.version ?? 0) + 1 }
}

const sameRecords = (a: HostedRecords, b: HostedRecords) =>
  a.records.length === b.records.length &&
  a.records.every((r, i) => r.name === b.records[i]!.name && r.text === b.records[i]!.text)

/**
 * A new version serving exactly what `version` served (its config and records: the known-good
 * state, flattened networks included). Rolling back to what is already current changes nothing.
 * The caller may re-plan from the restored config afterwards to pick up senders' new networks.
 */
export function rollbackTo(
  history: readonly SpfVersion[],
  version: number,
  meta: { actor: string; createdAt: string; reason?: string },
): Result<{ version: SpfVersion; changed: boolean }> {
  const target = history.find((v) => v.version === version)
  const latest = latestVersion(history)
  if (target === undefined || latest === null) return fail({ code: 'not_found', resource: 'spf_version' })
  const diff = diffConfigs(latest.config, target.config)
  const same =
    diff.added.length + diff.removed.length + diff.settings.length === 0 &&
    sameRecords(latest.records, target.records)
  if (same) return ok({ version: latest, changed: false })
  const next = nextVersion(history, {
    config: target.config,
    records: target.records,
    reason: meta.reason ?? `rollback to version ${version}`,
    actor: meta.actor,
    createdAt: meta.createdAt,
  })
  return ok({ version: next, changed: true })
}
