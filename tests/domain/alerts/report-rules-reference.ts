import { type AlertCandidate, EVIDENCE_LIST_LIMIT, roundRate } from '../../../domain/alerts/alert.ts'
import {
  NEW_SOURCE_MAX_AGE_DAYS,
  type ReportAlertInput,
  type ReportSource,
  SPOOFING_MIN_MESSAGES,
  UNKNOWN_SOURCE_MIN_MESSAGES,
  UNKNOWN_SOURCE_MIN_SHARE,
  UNKNOWN_SOURCE_SHARE_FLOOR,
} from '../../../domain/alerts/rules/reports.ts'
import type { Severity } from '../../../domain/shared/finding.ts'
import { formatCount, formatPercent, ratio } from '../../../domain/sources/figures.ts'
import type { DmarcPolicyState } from '../../../domain/sources/policy-readiness.ts'
import { isForwarding } from '../../../domain/sources/recommendation.ts'

// The source rules as they were before they read a bounded summary (domain/alerts/rules/reports.ts
// before issue #20's paging): every source in one list. report-summary.test.ts checks the rules
// over the summary against them.

const DAY_MS = 86_400_000
const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS
const today = (now: Date) => Math.floor(now.getTime() / DAY_MS)

const ipList = (sources: readonly ReportSource[]) => {
  const sorted = [...sources].sort(
    (a, b) =>
      b.stats.messages - a.stats.messages || (a.stats.ip < b.stats.ip ? -1 : a.stats.ip > b.stats.ip ? 1 : 0),
  )
  return {
    ips: sorted.slice(0, EVIDENCE_LIST_LIMIT).map(({ stats }) => ({
      ip: stats.ip,
      ptr: stats.ptr,
      messages: stats.messages,
      dmarcPass: stats.dmarcPass,
    })),
    ipsOmitted: Math.max(0, sorted.length - EVIDENCE_LIST_LIMIT),
  }
}

const sum = (sources: readonly ReportSource[], pick: (s: ReportSource) => number) =>
  sources.reduce((total, s) => total + pick(s), 0)

/**
 * Sources with status `unknown` (not identified, not forwarding), grouped by sending service when
 * the classifier named one (a provider sends from many IPs) and by IP otherwise.
 */
export function referenceUnknown({ domain, now, sources }: ReportAlertInput): AlertCandidate[] {
  const volume = sum(sources, (s) => s.stats.messages)
  const groups = new Map<string, ReportSource[]>()
  for (const source of sources) {
    if (source.status !== 'unknown' || isForwarding(source)) continue
    const service = source.classification.service
    const subject = service === null ? `ip:${source.stats.ip}` : `service:${service.id}`
    groups.set(subject, [...(groups.get(subject) ?? []), source])
  }
  const out: AlertCandidate[] = []
  for (const [subject, group] of [...groups].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const messages = sum(group, (s) => s.stats.messages)
    const share = ratio(messages, volume)
    const large =
      messages > UNKNOWN_SOURCE_MIN_MESSAGES ||
      (share > UNKNOWN_SOURCE_MIN_SHARE && messages >= UNKNOWN_SOURCE_SHARE_FLOOR)
    const firstSeen = group.map((s) => s.firstSeen).sort()[0]!
    if (!large || today(now) - dayNumber(firstSeen) > NEW_SOURCE_MAX_AGE_DAYS) continue
    const service = group[0]!.classification.service
    const ptr = group[0]!.stats.ptr
    const who = service !== null ? service.name : `${group[0]!.stats.ip}${ptr === null ? '' : ` (${ptr})`}`
    out.push({
      type: 'new_unknown_source',
      subject,
      severity: 'medium',
      title: `New unknown source ${who} sent ${formatCount(messages)} messages as ${domain} (${formatPercent(messages, volume)} of the day's mail)`,
      details: {
        evidence: {
          service: service === null ? null : { id: service.id, name: service.name },
          messages,
          dmarcPass: sum(group, (s) => s.stats.dmarcPass),
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

/**
 * Unaligned mail from hosts with no relation to the domain: status `suspicious` (no PTR, no known
 * service, nothing passing; or marked unwanted), no service named, no DMARC pass, not forwarding.
 */
export function referenceSpoofing({ domain, sources, policy }: ReportAlertInput): AlertCandidate[] {
  const spoofing = sources.filter(
    (s) =>
      s.status === 'suspicious' &&
      s.classification.service === null &&
      s.stats.dmarcPass === 0 &&
      !isForwarding(s),
  )
  const messages = sum(spoofing, (s) => s.stats.messages)
  if (messages < SPOOFING_MIN_MESSAGES) return []
  const delivered = policy === 'none' || policy === 'missing'
  return [
    {
      type: 'spoofing_attempt',
      subject: '',
      severity: SPOOFING_SEVERITY[policy],
      title: `Spoofing: ${formatCount(spoofing.length)} unknown ${spoofing.length === 1 ? 'host' : 'hosts'} sent ${formatCount(messages)} messages as ${domain} failing DMARC`,
      details: {
        evidence: {
          messages,
          unauthenticated: sum(spoofing, (s) =>
            s.stats.dkimPass === 0 && s.stats.spfPass === 0 ? s.stats.messages : 0,
          ),
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
