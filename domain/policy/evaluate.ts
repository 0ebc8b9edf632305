// Gathers what the progression engine decides from (progression.ts): the hosted policy, whether
// `_dmarc.<domain>` points at it, the readiness of the last 14 days (the same figures and
// classification as the sources view), and the legitimate sources' failure rate around the last
// change. Reads only; the use cases act on the decision.

import { discoverDmarc } from '../dmarc/discovery.ts'
import { type HostedDmarcView, hostedView, type PolicyLevel, policyLevelOf } from '../dmarc/hosting.ts'
import { type DmarcDomain, delegationOf } from '../dmarc/hosting-use-cases.ts'
import type { ProviderProblem } from '../dns-providers/use-cases.ts'
import type { Period } from '../reports/period.ts'
import type { Failure } from '../shared/result.ts'
import { classifyStats } from '../sources/list-sources.ts'
import {
  type DmarcPolicyState,
  type PolicyReadiness,
  policyReadiness,
  READINESS_WINDOW_DAYS,
} from '../sources/policy-readiness.ts'
import type { FigureScope } from '../sources/ports.ts'
import { dailySeries } from '../sources/source-intelligence.ts'
import type { SourceStats } from '../sources/source-stats.ts'
import { resolveSpfTree } from '../spf/include-tree.ts'
import type { PolicyChange, ProgressionDeps, RecordHome } from './ports.ts'
import {
  decideProgression,
  type LastChange,
  legitimateFailure,
  type ProgressionDecision,
  ROLLBACK_WATCH_DAYS,
} from './progression.ts'

/** How many changes the view lists, and the engine looks through. */
export const HISTORY_LIMIT = 50

/** The record progression changes: the hosted one, or the `_dmarc` TXT at a connected provider. */
export interface RecordInForce extends PolicyLevel {
  record: string
  home: RecordHome
}

export interface Evaluation {
  domain: DmarcDomain
  hosted: HostedDmarcView | null
  /** What a change would replace; null when the service can change neither (decision: hold). */
  inForce: RecordInForce | null
  /** The policy readiness was computed for: the hosted one, else the published one. */
  policy: DmarcPolicyState
  pct: number | null
  pointed: boolean | null
  readiness: PolicyReadiness
  /** Newest first. */
  history: PolicyChange[]
  lastChange: PolicyChange | null
  sinceLastChange: LastChange | null
  decision: ProgressionDecision
  /**
   * Why the DNS provider holding the zone could not be read (HTTP error, credentials, timeout);
   * null otherwise. The daily run fails on it so the job retries (docs/policy-progression.md).
   */
  readFailure: Failure | ProviderProblem | null
}

const DAY = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const startOfDay = (date: Date) => Math.floor(date.getTime() / DAY) * DAY

/** The 14 days ending today (UTC): today's partial figures count, as in the sources view. */
export function readinessWindow(now: Date): Period {
  const today = startOfDay(now)
  return { from: isoDay(today - (READINESS_WINDOW_DAYS - 1) * DAY), to: isoDay(today) }
}

export async function evaluateProgression(
  deps: ProgressionDeps,
  input: { accountId: string; domain: DmarcDomain },
): Promise<Evaluation> {
  const { domain } = input
  const now = deps.now()
  const scope: FigureScope = { accountId: input.accountId, domainId: domain.id }
  const window = readinessWindow(now)
  const [stored, history, stats, overrides, daily, spfTree] = await Promise.all([
    deps.store.hosted(input.accountId, domain.id),
    deps.store.history(input.accountId, domain.id, HISTORY_LIMIT),
    deps.figures.stats(scope, window),
    deps.figures.overrides(scope),
    deps.figures.daily(scope, window),
    resolveSpfTree({ dns: deps.dns }, domain.name),
  ])
  const hosted = stored === null ? null : hostedView(stored)
  let level: { policy: DmarcPolicyState; pct: number | null }
  let pointed: boolean | null = null
  let inForce: RecordInForce | null = null
  let unreadable: string | undefined
  let readFailure: Failure | ProviderProblem | null = null
  const zone = hosted === null ? await zoneRecord(deps, input.accountId, domain.name) : null
  if (hosted !== null) {
    level = hosted
    pointed = (await delegationOf(deps.dns, domain.name, stored)).pointed
    inForce = { record: hosted.record, policy: hosted.policy, pct: hosted.pct, home: 'hosted' }
  } else if (zone !== null && 'level' in zone) {
    // The provider's zone is what is served for the domain (zoneFor takes the longest zone), so a
    // change written there reaches receivers: nothing to point.
    level = zone.level
    pointed = true
    inForce = { record: zone.record, ...zone.level, home: 'provider' }
  } else {
    unreadable = zone?.problem
    readFailure = zone?.readFailure ?? null
    const published = await discoverDmarc({ dns: deps.dns }, domain.name)
    level = {
      policy: published.appliedPolicy?.policy ?? 'missing',
      pct: published.appliedPolicy === null ? null : (published.record?.pct ?? null),
    }
  }
  const classify = (list: readonly SourceStats[]) =>
    classifyStats({ domain: domain.name, stats: list, overrides, spfTree })
  const sources = classify(stats)
  const readiness = policyReadiness(dailySeries(daily, window.to), sources, level.policy, level.pct)
  const lastChange = history.find((change) => change.status === 'applied') ?? null
  const sinceLastChange =
    lastChange === null ? null : await figuresAround(deps, scope, lastChange, now, classify)
  const decision = decideProgression({
    domain: domain.name,
    automation: domain.automationLevel,
    verified: domain.verified,
    hosted: inForce,
    unreadable,
    pointed,
    readiness,
    sources,
    sinceLastChange,
    now,
  })
  return {
    domain,
    hosted,
    inForce,
    ...level,
    pointed,
    readiness,
    history,
    lastChange,
    sinceLastChange,
    decision,
    readFailure,
  }
}

/** The record a change would replace now: the hosted one, else the one at a connected provider. */
export async function recordInForce(
  deps: ProgressionDeps,
  accountId: string,
  domain: DmarcDomain,
): Promise<RecordInForce | null> {
  const stored = await deps.store.hosted(accountId, domain.id)
  if (stored !== null) {
    const hosted = hostedView(stored)
    return { record: hosted.record, policy: hosted.policy, pct: hosted.pct, home: 'hosted' }
  }
  const zone = await zoneRecord(deps, accountId, domain.name)
  return zone !== null && 'level' in zone ? { record: zone.record, ...zone.level, home: 'provider' } : null
}

/**
 * The DMARC record at a connected provider holding the domain's zone: its policy, or why it cannot
 * be used (unreadable provider, no or an unusable record). Null when no connected zone holds it.
 */
async function zoneRecord(
  deps: ProgressionDeps,
  accountId: string,
  domain: string,
): Promise<
  { record: string; level: PolicyLevel } | { problem: string; readFailure?: Failure | ProviderProblem } | null
> {
  if (deps.zoneDmarc === undefined) return null
  const read = await deps.zoneDmarc.read(accountId, domain)
  if (!read.ok) {
    const { failure } = read
    const why = 'message' in failure ? failure.message : failure.code
    return {
      problem: `the DNS provider holding the zone of ${domain} could not be read (${why})`,
      readFailure: failure,
    }
  }
  if (read.value === null) return null
  const record = read.value.record
  const level = record === null ? null : policyLevelOf(record)
  if (record === null || level === null)
    return { problem: `the DNS provider holds no single valid DMARC record at _dmarc.${domain}` }
  return { record, level }
}

/**
 * The legitimate sources' DMARC failure share in the 14 days before the day of the change and in
 * the days after it (the change's own day mixes both policies and is left out). Sources are
 * classified over both periods together, so a legitimate sender that fails everything after the
 * change still counts as legitimate (on its own it would look unknown: docs/sources.md).
 */
async function figuresAround(
  deps: ProgressionDeps,
  scope: FigureScope,
  change: PolicyChange,
  now: Date,
  classify: (stats: readonly SourceStats[]) => ReturnType<typeof classifyStats>,
): Promise<LastChange> {
  const appliedAt = change.appliedAt ?? change.createdAt
  const days = Math.floor((now.getTime() - appliedAt.getTime()) / DAY)
  const base: LastChange = {
    kind: change.kind,
    from: change.from,
    to: change.to,
    days,
    failureRateBefore: null,
    failureRateAfter: null,
    messagesAfter: 0,
  }
  const changeDay = startOfDay(appliedAt)
  const today = startOfDay(now)
  // Only advances are rolled back automatically, within the watch; nothing to compare on day one.
  if (change.kind !== 'advance' || days > ROLLBACK_WATCH_DAYS || changeDay + DAY > today) return base
  const before: Period = {
    from: isoDay(changeDay - READINESS_WINDOW_DAYS * DAY),
    to: isoDay(changeDay - DAY),
  }
  const after: Period = { from: isoDay(changeDay + DAY), to: isoDay(today) }
  const [all, pre, post] = await Promise.all([
    deps.figures.stats(scope, { from: before.from, to: after.to }),
    deps.figures.stats(scope, before),
    deps.figures.stats(scope, after),
  ])
  const status = new Map(classify(all).map((view) => [view.stats.ip, view.status]))
  const rate = (list: SourceStats[]) =>
    legitimateFailure(list.map((stats) => ({ stats, status: status.get(stats.ip) ?? 'unknown' })))
  const beforeRate = rate(pre)
  const afterRate = rate(post)
  return {
    ...base,
    failureRateBefore: beforeRate.rate,
    failureRateAfter: afterRate.rate,
    messagesAfter: afterRate.messages,
  }
}
