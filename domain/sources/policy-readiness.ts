// Whether the domain's DMARC policy can take its next step (docs/policy-progression.md: none → quarantine →
// reject, when the last 14 days show enough volume, a DMARC pass rate of at least 98% and no
// unidentified legitimate source failing). Used by the `advance_policy` recommendation and, later,
// by automatic policy progression, so it is a function of its own with its reasons spelled out.

import type { DmarcPolicy } from '../dmarc/record.ts'
import type { SourceStatus } from './classify.ts'
import { formatCount, formatPercent, ratio } from './figures.ts'
import type { SourceStats } from './source-stats.ts'

export type DmarcPolicyState = DmarcPolicy | 'missing'

export interface DailyVolume {
  /** ISO date, YYYY-MM-DD. */
  day: string
  messages: number
  dmarcPass: number
}

export interface PolicyStep {
  policy: DmarcPolicy
  /** RFC 7489 pct after the step; 100 means the tag can be dropped. */
  pct: number
}

export interface PolicyReadiness {
  /** The next step may be taken: there is one and nothing blocks it. */
  ready: boolean
  /** null when the policy is already p=reject on all mail. */
  next: PolicyStep | null
  /** DMARC pass rate over the window, null when the window holds no messages. */
  passRate: number | null
  messages: number
  dmarcPass: number
  /** Days of the window that have an entry in `daily`. */
  days: number
  /** Why the step cannot be taken yet, one sentence each, in a fixed order. */
  blockers: string[]
}

export interface ReadinessSource {
  stats: Pick<SourceStats, 'ip' | 'messages' | 'dmarcPass'>
  status: SourceStatus
  classification: { service: { name: string } | null }
}

export const READINESS_WINDOW_DAYS = 14
/** At 98% a 100-message window allows two failures; any less and one message moves the rate a point. */
export const READINESS_MIN_MESSAGES = 100
export const READINESS_MIN_PASS_RATE = 0.98
/** An unknown source above this share of the volume is significant enough to identify first. */
export const SIGNIFICANT_SHARE = 0.01

/**
 * missing → none (a record to start monitoring), none → quarantine, quarantine → reject; at
 * quarantine or reject a pct below 100 is raised to 100 first, since it exempts part of the
 * failing mail from the policy already published. pct means nothing at p=none (RFC 7489 §6.3).
 */
export function nextPolicyStep(policy: DmarcPolicyState, pct: number | null): PolicyStep | null {
  const applied = pct ?? 100
  switch (policy) {
    case 'missing':
      return { policy: 'none', pct: 100 }
    case 'none':
      return { policy: 'quarantine', pct: 100 }
    case 'quarantine':
      return applied < 100 ? { policy: 'quarantine', pct: 100 } : { policy: 'reject', pct: 100 }
    case 'reject':
      return applied < 100 ? { policy: 'reject', pct: 100 } : null
  }
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/

/** Days since 1970-01-01 (Date.UTC is pure arithmetic; no clock is read). */
function dayNumber(day: string, position: number): number {
  const match = ISO_DAY.exec(day)
  const number = match === null ? Number.NaN : Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!) / 86_400_000
  if (!Number.isInteger(number))
    throw new Error(`daily[${position}].day ${JSON.stringify(day)} is not YYYY-MM-DD`)
  return number
}

/** The window is the 14 days ending on the latest day listed; a day listed twice is summed. */
function windowTotals(daily: readonly DailyVolume[]) {
  const numbers = daily.map((entry, i) => dayNumber(entry.day, i))
  const last = numbers.length === 0 ? 0 : Math.max(...numbers)
  const covered = new Set<number>()
  let messages = 0
  let dmarcPass = 0
  for (const [i, entry] of daily.entries()) {
    const number = numbers[i]!
    if (number <= last - READINESS_WINDOW_DAYS) continue
    covered.add(number)
    messages += entry.messages
    dmarcPass += entry.dmarcPass
  }
  return { messages, dmarcPass, days: covered.size }
}

const describe = (source: ReadinessSource) =>
  source.classification.service === null
    ? source.stats.ip
    : `${source.classification.service.name} ${source.stats.ip}`

const failing = (source: ReadinessSource) =>
  source.stats.messages > 0 && ratio(source.stats.dmarcPass, source.stats.messages) < READINESS_MIN_PASS_RATE

const bySize = (a: ReadinessSource, b: ReadinessSource) =>
  b.stats.messages - a.stats.messages || (a.stats.ip < b.stats.ip ? -1 : a.stats.ip > b.stats.ip ? 1 : 0)

/**
 * `sources` are the per-IP figures of the reporting period (not necessarily 14 days); they name the
 * senders that would suffer: a legitimate source failing DMARC, or an unknown one carrying more than
 * 1% of the volume (possibly legitimate, so "unidentified legitimate" in docs/policy-progression.md's words).
 * Suspicious and forwarder sources never block: quarantining spoofing is the point, and forwarded
 * mail is judged by ARC and local policy at the receiver.
 */
export function policyReadiness(
  daily: readonly DailyVolume[],
  sources: readonly ReadinessSource[],
  policy: DmarcPolicyState,
  pct: number | null = null,
): PolicyReadiness {
  const next = nextPolicyStep(policy, pct)
  const window = windowTotals(daily)
  const figures = {
    next,
    passRate: window.messages > 0 ? window.dmarcPass / window.messages : null,
    messages: window.messages,
    dmarcPass: window.dmarcPass,
    days: window.days,
  }
  // Publishing p=none changes no delivery, so nothing can block it; at p=reject there is no step.
  if (next === null || policy === 'missing') return { ready: next !== null, ...figures, blockers: [] }

  const blockers: string[] = []
  const span = `${READINESS_WINDOW_DAYS} days`
  if (window.days < READINESS_WINDOW_DAYS) {
    blockers.push(`only ${window.days} of the last ${span} have report data`)
  }
  if (window.messages < READINESS_MIN_MESSAGES) {
    blockers.push(
      `${formatCount(window.messages)} messages over ${span}, below the minimum of ${formatCount(READINESS_MIN_MESSAGES)}`,
    )
  }
  if (window.messages > 0 && ratio(window.dmarcPass, window.messages) < READINESS_MIN_PASS_RATE) {
    const rate = formatPercent(window.dmarcPass, window.messages)
    blockers.push(`DMARC pass rate ${rate} over ${span}, below ${formatPercent(READINESS_MIN_PASS_RATE, 1)}`)
  }
  const volume = sources.reduce((sum, source) => sum + source.stats.messages, 0)
  const sorted = [...sources].sort(bySize)
  for (const source of sorted) {
    if (source.status !== 'legitimate' || !failing(source)) continue
    const rate = formatPercent(source.stats.dmarcPass, source.stats.messages)
    blockers.push(
      `legitimate source ${describe(source)} passes DMARC on ${rate} of ${formatCount(source.stats.messages)} messages`,
    )
  }
  for (const source of sorted) {
    if (source.status !== 'unknown' || !failing(source)) continue
    if (ratio(source.stats.messages, volume) <= SIGNIFICANT_SHARE) continue
    const rate = formatPercent(source.stats.dmarcPass, source.stats.messages)
    const share = formatPercent(source.stats.messages, volume)
    blockers.push(
      `${source.classification.service === null ? 'unidentified' : 'unconfirmed'} source ${describe(source)} (${share} of the volume) passes DMARC on ${rate}: mark it legitimate or unwanted`,
    )
  }
  return { ready: blockers.length === 0, ...figures, blockers }
}
