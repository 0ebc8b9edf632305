// DMARC policy progression (issue #6, docs/policy-progression.md): none → quarantine → reject for verified domains
// whose policy the service hosts. The engine decides from the readiness figures (the last 14 days,
// domain/sources/policy-readiness.ts) and the effect of the last change; it never advances with a
// blocker, keeps steps at least a week apart, and rolls a step back when legitimate mail started
// failing after it. Pure and deterministic; rules and thresholds in docs/policy-progression.md.

import { describeLevel, type PolicyLevel } from '../dmarc/hosting.ts'
import type { DmarcPolicy } from '../dmarc/record.ts'
import type { AutomationLevel } from '../domains/domain.ts'
import type { SourceStatus } from '../sources/classify.ts'
import { formatCount, formatPercent, ratio } from '../sources/figures.ts'
import {
  type PolicyReadiness,
  READINESS_MIN_PASS_RATE,
  READINESS_WINDOW_DAYS,
  type ReadinessSource,
  SIGNIFICANT_SHARE,
} from '../sources/policy-readiness.ts'
import type { SourceStats } from '../sources/source-stats.ts'

/**
 * Receivers report a day's mail the next day (RFC 9990), so a week after a change there are about
 * six full days of reports about the new policy: enough to see whether anything legitimate broke
 * before taking the next step (and the step after reject does not exist).
 */
export const MIN_DAYS_BETWEEN_STEPS = 7
/** A spike: legitimate sources' DMARC failure share above 2% ... */
export const ROLLBACK_MIN_FAILURE_RATE = 0.02
/** ... and at least three times what it was before the change ... */
export const ROLLBACK_MIN_FACTOR = 3
/** ... over at least 100 legitimate messages since the change (fewer and one message is 1%). */
export const ROLLBACK_MIN_MESSAGES = 100
/** Past this, a failure spike is no longer blamed on the change: readiness and alerts take over. */
export const ROLLBACK_WATCH_DAYS = 30

export type ProgressionAction = 'advance' | 'propose' | 'hold' | 'rollback'

export type ChangeKind = 'advance' | 'rollback' | 'edit'

/** The last applied change of the hosted policy, with legitimate-source figures around it. */
export interface LastChange {
  kind: ChangeKind
  from: PolicyLevel
  to: PolicyLevel
  /** Whole days since it was applied. */
  days: number
  /** Legitimate sources' DMARC failure share in the 14 days before the change (null: no mail). */
  failureRateBefore: number | null
  /** The same since the change (days after the day it was applied; null: no mail yet). */
  failureRateAfter: number | null
  /** Legitimate messages the after-rate counts. */
  messagesAfter: number
}

export interface ProgressionSource extends ReadinessSource {
  stats: Pick<SourceStats, 'ip' | 'messages' | 'dmarcPass' | 'dkimAligned'>
}

export interface ProgressionInput {
  domain: string
  automation: AutomationLevel
  verified: boolean
  /**
   * The record a change replaces (the hosted one, or the one at a connected DNS provider); null when
   * the service can change neither.
   */
  hosted: (PolicyLevel & { record: string }) | null
  /** Why the record at a connected DNS provider cannot be used, when it cannot. */
  unreadable?: string
  /** Whether `_dmarc.<domain>` is a CNAME to the hosted name; null when DNS could not tell. */
  pointed: boolean | null
  /** policyReadiness over the last 14 days, computed with the hosted policy. */
  readiness: PolicyReadiness
  /** The sources readiness was computed from (for the summary of source blockers). */
  sources: readonly ProgressionSource[]
  sinceLastChange: LastChange | null
  now: Date
}

export interface ProgressionDecision {
  action: ProgressionAction
  /** advance: a step up; rollback: back to the last change's starting point; null for hold. */
  kind: 'advance' | 'rollback' | null
  from: DmarcPolicy | null
  to: DmarcPolicy | null
  /** The target (policy and pct; pct null means the tag is dropped). */
  target: PolicyLevel | null
  reason: string
  blockers: string[]
  /** When waiting out MIN_DAYS_BETWEEN_STEPS: the first day a step may be taken (YYYY-MM-DD). */
  notBefore: string | null
}

const DAY_MS = 86_400_000
const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`
/** A share as titles show it (one decimal, truncated: docs/sources.md). */
const percent = (rate: number) => formatPercent(Math.round(rate * 1e6), 1e6)

/** Legitimate sources' DMARC failure share, and the messages it counts. */
export function legitimateFailure(
  sources: readonly { status: SourceStatus; stats: Pick<SourceStats, 'messages' | 'dmarcPass'> }[],
): { rate: number | null; messages: number } {
  let messages = 0
  let failing = 0
  for (const source of sources) {
    if (source.status !== 'legitimate') continue
    messages += source.stats.messages
    failing += source.stats.messages - source.stats.dmarcPass
  }
  return { rate: messages > 0 ? failing / messages : null, messages }
}

/** The spike rule (docs/policy-progression.md): > 2%, ≥ 3× before, ≥ 100 messages, ≤ 30 days. */
export function failureSpiked(change: LastChange): boolean {
  if (change.kind !== 'advance' || change.days > ROLLBACK_WATCH_DAYS) return false
  if (change.messagesAfter < ROLLBACK_MIN_MESSAGES || change.failureRateAfter === null) return false
  const after = change.failureRateAfter
  return after > ROLLBACK_MIN_FAILURE_RATE && after >= ROLLBACK_MIN_FACTOR * (change.failureRateBefore ?? 0)
}

const failingSource = (source: ReadinessSource) =>
  source.stats.messages > 0 && ratio(source.stats.dmarcPass, source.stats.messages) < READINESS_MIN_PASS_RATE

/**
 * The source blockers of policyReadiness, summed up in one clause each: "2 legitimate sources still
 * fail DKIM" (a DMARC failure means neither DKIM nor SPF aligned, and DKIM is the fix that survives
 * forwarding), "1 unidentified source with 3.0% of the volume still fails DMARC".
 */
function sourceSummary(sources: readonly ProgressionSource[]): { clauses: string[]; count: number } {
  const volume = sources.reduce((sum, source) => sum + source.stats.messages, 0)
  const legitimate = sources.filter((s) => s.status === 'legitimate' && failingSource(s))
  const unknown = sources.filter(
    (s) => s.status === 'unknown' && failingSource(s) && ratio(s.stats.messages, volume) > SIGNIFICANT_SHARE,
  )
  const clauses: string[] = []
  if (legitimate.length > 0) {
    const noDkim = legitimate.filter(
      (s) => ratio(s.stats.dkimAligned, s.stats.messages) < READINESS_MIN_PASS_RATE,
    )
    const verb = legitimate.length === 1 ? 'fails' : 'fail'
    clauses.push(
      `${plural(legitimate.length, 'legitimate source')} still ${verb} ${noDkim.length === legitimate.length ? 'DKIM' : 'DMARC'}`,
    )
  }
  if (unknown.length > 0) {
    const messages = unknown.reduce((sum, s) => sum + s.stats.messages, 0)
    const verb = unknown.length === 1 ? 'fails' : 'fail'
    clauses.push(
      `${plural(unknown.length, 'unidentified source')} with ${formatPercent(messages, volume)} of the volume still ${verb} DMARC`,
    )
  }
  return { clauses, count: legitimate.length + unknown.length }
}

function hold(input: ProgressionInput, blockers: string[], reason: string, notBefore: string | null = null) {
  const from = input.hosted?.policy ?? null
  return { action: 'hold', kind: null, from, to: null, target: null, reason, blockers, notBefore } as const
}

export function decideProgression(input: ProgressionInput): ProgressionDecision {
  const { hosted, readiness, sinceLastChange: last } = input
  if (input.automation === 'manual') {
    return hold(input, [], 'Automation level is manual: the policy is monitored, never changed.')
  }
  if (!input.verified) {
    const blocker = `verify ownership of ${input.domain} first: policies change only for verified domains`
    return hold(input, [blocker], `Not yet: ${blocker}.`)
  }
  if (hosted === null) {
    const blocker =
      input.unreadable ??
      `host the DMARC record of ${input.domain} first (POST /domains/${input.domain}/dmarc/host), or connect the DNS provider that holds its zone`
    return hold(input, [blocker], `Not yet: ${blocker}.`)
  }
  const assisted = input.automation === 'assisted'

  if (last !== null && failureSpiked(last) && samePolicy(last.to, hosted)) {
    const reason = `rolled back: legitimate sources fail DMARC on ${percent(last.failureRateAfter!)} of ${plural(last.messagesAfter, 'message')} since the change to ${describeLevel(last.to)} ${plural(last.days, 'day')} ago (${percent(last.failureRateBefore ?? 0)} before)`
    return {
      action: assisted ? 'propose' : 'rollback',
      kind: 'rollback',
      from: hosted.policy,
      to: last.from.policy,
      target: last.from,
      reason: assisted
        ? `Proposed rollback: ${reason.slice('rolled back: '.length)}.`
        : `${capital(reason)}.`,
      blockers: [],
      notBefore: null,
    }
  }

  const blockers: string[] = []
  if (input.pointed !== true) {
    blockers.push(
      input.pointed === null
        ? `the CNAME at _dmarc.${input.domain} could not be checked (DNS failure)`
        : `_dmarc.${input.domain} is not a CNAME to the hosted record yet, so a change would not reach receivers`,
    )
  }
  let notBefore: string | null = null
  if (last !== null && last.days < MIN_DAYS_BETWEEN_STEPS) {
    notBefore = new Date(input.now.getTime() + (MIN_DAYS_BETWEEN_STEPS - last.days) * DAY_MS)
      .toISOString()
      .slice(0, 10)
    blockers.push(
      `the last change was ${plural(last.days, 'day')} ago; steps are at least ${MIN_DAYS_BETWEEN_STEPS} days apart (next on ${notBefore})`,
    )
  }
  const next = readiness.next
  if (next === null) {
    return hold(input, blockers, `The policy is already p=reject on all mail: nothing left to advance.`)
  }
  blockers.push(...readiness.blockers)
  if (blockers.length > 0) {
    // readiness lists its source blockers last (docs/sources.md, "Policy readiness"): the others are
    // kept word for word, the per-source ones summed up in a clause.
    const summary = sourceSummary(input.sources)
    const others = blockers.slice(0, blockers.length - summary.count)
    const clauses = [...others, ...summary.clauses]
    return hold(
      input,
      blockers,
      `Not advancing to ${describeLevel(next)} yet: ${clauses.join('; ')}.`,
      notBefore,
    )
  }

  const target: PolicyLevel = { policy: next.policy, pct: null }
  const evidence = `${formatPercent(readiness.dmarcPass, readiness.messages)} of ${plural(readiness.messages, 'message')} passed DMARC over the last ${READINESS_WINDOW_DAYS} days and no legitimate or unidentified source is failing`
  const step = next.policy === hosted.policy ? `pct=100 at p=${next.policy}` : `p=${next.policy}`
  return {
    action: assisted ? 'propose' : 'advance',
    kind: 'advance',
    from: hosted.policy,
    to: next.policy,
    target,
    reason: `Ready for ${step}: ${evidence}.`,
    blockers: [],
    notBefore: null,
  }
}

/** Whether the hosted record still states what the change set (else it was edited since). */
function samePolicy(level: PolicyLevel, hosted: PolicyLevel): boolean {
  return level.policy === hosted.policy && (level.pct ?? 100) === (hosted.pct ?? 100)
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
