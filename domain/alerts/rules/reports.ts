import type { Severity } from '../../shared/finding.ts'
import { formatCount, formatPercent, ratio } from '../../sources/figures.ts'
import type { DailyVolume, DmarcPolicyState } from '../../sources/policy-readiness.ts'
import { isForwarding } from '../../sources/recommendation.ts'
import {
  type AlertCandidate,
  type AlertType,
  EVIDENCE_LIST_LIMIT,
  type RuleScope,
  roundRate,
} from '../alert.ts'
import { ipList, type ReportSource, type SourceTally, tallySource } from './report-sources.ts'

export type { ReportSource } from './report-sources.ts'

// Report rules: what the aggregate reports (RFC 7489 §7.2, RFC 9990) and failure reports say about
// the mail sent as the domain. Every figure is a message count, never a row count, so rates are
// volume-weighted. Aggregate reports cover whole days and arrive during the following day, so the
// windows end with yesterday (UTC): today's figures are still coming in.

export interface ReportAlertInput {
  domain: string
  now: Date
  /** Domain totals per day; days without an entry count as no mail. */
  daily: readonly DailyVolume[]
  /** Per-IP figures over the last day (yesterday, UTC), classified as for the sources list. */
  sources: readonly ReportSource[]
  /** The DMARC policy the domain publishes: how much of the spoofed mail is delivered. */
  policy: DmarcPolicyState
}

export const REPORT_ALERT_TYPES = [
  'dmarc_failure_rate',
  'new_unknown_source',
  'spoofing_attempt',
] as const satisfies readonly AlertType[]

/** Failure rate above which the domain's mail is in trouble (strictly above). */
export const FAILURE_RATE_THRESHOLD = 0.1
/** Above this, a quarter of the mail fails: high rather than medium. */
export const FAILURE_RATE_HIGH = 0.25
/** A window with fewer messages says nothing: one failure moves the rate by more than a point. */
export const FAILURE_RATE_MIN_MESSAGES = 100
/** The last day catches a sudden break (a key rotated wrong), the last 7 days a steady leak. */
export const FAILURE_RATE_WINDOWS_DAYS = [1, 7] as const

/** An unknown source is worth an alert above this many messages in a day (strictly above)... */
export const UNKNOWN_SOURCE_MIN_MESSAGES = 100
/** ...or above this share of the day's volume... */
export const UNKNOWN_SOURCE_MIN_SHARE = 0.05
/** ...provided the share is at least this many messages (a 3-message domain is not 3 alerts). */
export const UNKNOWN_SOURCE_SHARE_FLOOR = 10
/** "New": first reported at most this many days before today. */
export const NEW_SOURCE_MAX_AGE_DAYS = 7

/** Unaligned messages in a day from unrelated hosts before it is called a spoofing attempt. */
export const SPOOFING_MIN_MESSAGES = 50

const DAY_MS = 86_400_000
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/

function dayNumber(day: string): number {
  const match = ISO_DAY.exec(day)
  if (match === null) throw new Error(`${JSON.stringify(day)} is not YYYY-MM-DD`)
  return Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!) / DAY_MS
}
const isoDay = (number: number) => new Date(number * DAY_MS).toISOString().slice(0, 10)
const today = (now: Date) => Math.floor(now.getTime() / DAY_MS)

export function failureRateAlerts({
  domain,
  now,
  daily,
}: Pick<ReportAlertInput, 'domain' | 'now' | 'daily'>): AlertCandidate[] {
  const last = today(now) - 1
  const windows = FAILURE_RATE_WINDOWS_DAYS.map((days) => {
    let messages = 0
    let dmarcPass = 0
    for (const entry of daily) {
      const day = dayNumber(entry.day)
      if (day > last - days && day <= last) {
        messages += entry.messages
        dmarcPass += entry.dmarcPass
      }
    }
    const failed = messages - dmarcPass
    return { days, from: isoDay(last - days + 1), to: isoDay(last), messages, dmarcPass, failed }
  })
  const firing = windows
    .filter(
      (w) => w.messages >= FAILURE_RATE_MIN_MESSAGES && ratio(w.failed, w.messages) > FAILURE_RATE_THRESHOLD,
    )
    .sort((a, b) => ratio(b.failed, b.messages) - ratio(a.failed, a.messages) || a.days - b.days)
  const worst = firing[0]
  if (worst === undefined) return []
  const rate = ratio(worst.failed, worst.messages)
  const period = worst.days === 1 ? `on ${worst.to}` : `over the ${worst.days} days to ${worst.to}`
  return [
    {
      type: 'dmarc_failure_rate',
      subject: '',
      severity: rate > FAILURE_RATE_HIGH ? 'high' : 'medium',
      title: `${formatPercent(worst.failed, worst.messages)} of ${formatCount(worst.messages)} messages from ${domain} failed DMARC ${period}`,
      details: {
        evidence: {
          windows: windows.map((w) => ({ ...w, failureRate: roundRate(ratio(w.failed, w.messages)) })),
          threshold: FAILURE_RATE_THRESHOLD,
          minMessages: FAILURE_RATE_MIN_MESSAGES,
        },
        remedy:
          'Open the sources list: a legitimate service failing needs its SPF include or DKIM key (RFC 7489 §3.1 alignment); failures from unknown hosts are spoofing, which the policy, not the service, handles.',
      },
    },
  ]
}

/**
 * What the source rules need of the last day's sources, whatever their number: the day's volume,
 * the unknown sources grouped by subject and the spoofing ones, as tallies (report-sources.ts).
 */
export interface SourceSummary {
  /** Messages of all the day's sources: the denominator of an unknown source's share. */
  volume: number
  unknown: Map<string, SourceTally>
  spoofing: SourceTally | undefined
}

export type SummaryInput = Omit<ReportAlertInput, 'sources'> & { summary: SourceSummary }

/** Whether an unknown source (or service) sending `messages` of `volume` is worth an alert. */
export const largeUnknown = (messages: number, volume: number): boolean =>
  messages > UNKNOWN_SOURCE_MIN_MESSAGES ||
  (ratio(messages, volume) > UNKNOWN_SOURCE_MIN_SHARE && messages >= UNKNOWN_SOURCE_SHARE_FLOOR)

/**
 * Sources with status `unknown` (not identified, not forwarding) are grouped by sending service
 * when the classifier named one (a provider sends from many IPs) and by IP otherwise. Spoofing:
 * unaligned mail from hosts with no relation to the domain, status `suspicious` (no PTR, no known
 * service, nothing passing; or marked unwanted), no service named, no DMARC pass, not forwarding.
 */
export function summarize(summary: SourceSummary, sources: readonly ReportSource[]): SourceSummary {
  for (const source of sources) {
    const service = source.classification.service
    if (source.status === 'unknown' && !isForwarding(source)) {
      // A group of one IP (an IP is one source) too small now stays too small: it is not kept.
      if (service !== null || largeUnknown(source.stats.messages, summary.volume)) {
        const subject = service === null ? `ip:${source.stats.ip}` : `service:${service.id}`
        summary.unknown.set(subject, tallySource(summary.unknown.get(subject), source))
      }
    }
    if (
      source.status === 'suspicious' &&
      service === null &&
      source.stats.dmarcPass === 0 &&
      !isForwarding(source)
    )
      summary.spoofing = tallySource(summary.spoofing, source)
  }
  return summary
}

const summaryOf = (sources: readonly ReportSource[]): SourceSummary =>
  summarize(
    {
      volume: sources.reduce((total, s) => total + s.stats.messages, 0),
      unknown: new Map(),
      spoofing: undefined,
    },
    sources,
  )

export const unknownSourceAlerts = (input: ReportAlertInput): AlertCandidate[] =>
  unknownSummaryAlerts({ ...input, summary: summaryOf(input.sources) })

/** One alert per unknown group that is large and new (first reported in the last days). */
export function unknownSummaryAlerts({ domain, now, summary }: SummaryInput): AlertCandidate[] {
  const { volume } = summary
  const out: AlertCandidate[] = []
  for (const [subject, group] of [...summary.unknown].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { messages, firstSeen } = group
    const share = ratio(messages, volume)
    if (!largeUnknown(messages, volume) || today(now) - dayNumber(firstSeen) > NEW_SOURCE_MAX_AGE_DAYS)
      continue
    const lead = group.top[0]!
    const service = lead.classification.service
    const ptr = lead.stats.ptr
    const who = service !== null ? service.name : `${lead.stats.ip}${ptr === null ? '' : ` (${ptr})`}`
    out.push({
      type: 'new_unknown_source',
      subject,
      severity: 'medium',
      title: `New unknown source ${who} sent ${formatCount(messages)} messages as ${domain} (${formatPercent(messages, volume)} of the day's mail)`,
      details: {
        evidence: {
          service: service === null ? null : { id: service.id, name: service.name },
          messages,
          dmarcPass: group.dmarcPass,
          share: roundRate(share),
          firstSeen,
          ...ipList(group),
        },
        remedy:
          'Find out whether this sender is yours. If it is, mark it legitimate and authorise it (SPF include and DKIM at the service); if not, mark it unwanted so it counts as spoofing.',
      },
    })
  }
  return out
}

/** The policy decides what receivers do with the spoofed mail (RFC 9989 §4.7). */
const SPOOFING_SEVERITY: Record<DmarcPolicyState, Severity> = {
  missing: 'high',
  none: 'high',
  quarantine: 'medium',
  reject: 'low',
}

export const spoofingAlerts = (input: ReportAlertInput): AlertCandidate[] =>
  spoofingSummaryAlerts({ ...input, summary: summaryOf(input.sources) })

/** One alert for the domain while the day's spoofing reaches SPOOFING_MIN_MESSAGES. */
export function spoofingSummaryAlerts({ domain, policy, summary }: SummaryInput): AlertCandidate[] {
  const spoofing = summary.spoofing
  if (spoofing === undefined || spoofing.messages < SPOOFING_MIN_MESSAGES) return []
  const { messages, sources: hosts } = spoofing
  const delivered = policy === 'none' || policy === 'missing'
  return [
    {
      type: 'spoofing_attempt',
      subject: '',
      severity: SPOOFING_SEVERITY[policy],
      title: `Spoofing: ${formatCount(hosts)} unknown ${hosts === 1 ? 'host' : 'hosts'} sent ${formatCount(messages)} messages as ${domain} failing DMARC`,
      details: {
        evidence: {
          messages,
          unauthenticated: spoofing.unauthenticated,
          policy,
          ...ipList(spoofing),
        },
        remedy: delivered
          ? 'Receivers deliver this mail: move the DMARC policy to quarantine, then reject, once your own services pass (see the policy readiness).'
          : policy === 'quarantine'
            ? 'Receivers put this mail in spam; p=reject would refuse it outright.'
            : 'p=reject has receivers refuse this mail; nothing to change unless the volume keeps growing.',
      },
    },
  ]
}

export const FAILURE_REPORT_ALERT_TYPES = ['failure_report_received'] as const satisfies readonly AlertType[]

export const reportAlerts = (input: ReportAlertInput): AlertCandidate[] =>
  summaryAlerts({ ...input, summary: summaryOf(input.sources) })

/** The three report rules over a summary built a page of sources at a time. */
export function summaryAlerts(input: SummaryInput): AlertCandidate[] {
  return [...failureRateAlerts(input), ...unknownSummaryAlerts(input), ...spoofingSummaryAlerts(input)]
}

/** Every report rule looks at the whole window: all three are evaluated for all subjects. */
export function reportScope(): RuleScope {
  return { rulesEvaluated: [...REPORT_ALERT_TYPES] }
}

export interface FailureReportInput {
  domain: string
  /** Failure reports (RFC 9991) stored since the previous evaluation. */
  newReports: readonly { id: string; sourceIp: string | null; reportedAt: Date }[]
}

/**
 * One alert per domain while reports keep coming (an event type: the user resolves it). A failure
 * report describes one message that failed DMARC, so each is a lead worth opening.
 */
export function failureReportAlerts({ domain, newReports }: FailureReportInput): AlertCandidate[] {
  if (newReports.length === 0) return []
  const newest = [...newReports].sort(
    (a, b) => b.reportedAt.getTime() - a.reportedAt.getTime() || (a.id < b.id ? -1 : 1),
  )
  const count = newReports.length
  return [
    {
      type: 'failure_report_received',
      subject: '',
      severity: 'medium',
      title: `${formatCount(count)} failure ${count === 1 ? 'report' : 'reports'} received for ${domain}`,
      details: {
        evidence: {
          count,
          latestAt: newest[0]!.reportedAt.toISOString(),
          reports: newest
            .slice(0, EVIDENCE_LIST_LIMIT)
            .map((r) => ({ id: r.id, sourceIp: r.sourceIp, reportedAt: r.reportedAt.toISOString() })),
          reportsOmitted: Math.max(0, count - EVIDENCE_LIST_LIMIT),
        },
        remedy:
          'Open the reports: a source IP of yours needs its SPF or DKIM fixed; an unknown one is spoofing, which a stricter DMARC policy stops.',
      },
    },
  ]
}
