// Machine-generated source recommendations (issue #5, `GET /domains/{domain}/sources/intelligence`):
// from the per-IP figures, their classification and status, the published SPF and DMARC records
// and the daily totals, what the owner should change and what it would do. Pure and deterministic:
// the same input, in any order, gives the same list, ids and titles. Rules and thresholds:
// docs/sources.md, "Recommendations".

import { type CatalogIndex, normalizeName, SHIPPED_CATALOG_INDEX } from './catalog.ts'
import { formatCount, formatPercent, ratio } from './figures.ts'
import {
  nextPolicyStep,
  type PolicyReadiness,
  policyReadiness,
  READINESS_WINDOW_DAYS,
  SIGNIFICANT_SHARE,
} from './policy-readiness.ts'
import {
  compareRecommendations,
  compareSources,
  countWithShare,
  EVIDENCE_LIST_LIMIT,
  effect,
  type IntelligenceInput,
  isForwarding,
  type Recommendation,
  type RuleContext,
  type SourceInput,
  totals,
} from './recommendation.ts'
import { serviceRecommendations } from './service-recommendations.ts'

export type { IntelligenceInput, Recommendation, SourceInput } from './recommendation.ts'

/** Forwarded mail whose DKIM survives less often than this needs ARC (RFC 8617) to pass DMARC. */
export const ARC_RELEVANT_BELOW = 0.9
/** Unknown volume above this share is worth a `medium` rather than a `low`. */
export const UNKNOWN_MEDIUM_SHARE = 0.05

/** The heaviest sources first, at most EVIDENCE_LIST_LIMIT of them, and how many were left out. */
function sourceList(sources: readonly SourceInput[]) {
  const sorted = [...sources].sort(compareSources)
  return {
    sources: sorted.slice(0, EVIDENCE_LIST_LIMIT).map(({ stats, classification }) => ({
      ip: stats.ip,
      messages: stats.messages,
      dmarcPass: stats.dmarcPass,
      ptr: stats.ptr,
      service: classification.service?.id ?? null,
    })),
    sourcesOmitted: Math.max(0, sorted.length - EVIDENCE_LIST_LIMIT),
  }
}

const plural = (count: number, one: string, many: string) =>
  `${formatCount(count)} ${count === 1 ? one : many}`

/** The tags to set at `_dmarc.<domain>` for the next step; pct=100 only where a lower pct is published. */
function policyTags(ctx: RuleContext, next: NonNullable<PolicyReadiness['next']>): string {
  const { policy, pct } = ctx.input.dmarc
  if (policy === 'missing') return 'v=DMARC1; p=none'
  if (next.policy === policy) return `pct=${next.pct}`
  return pct !== null && pct < next.pct ? `p=${next.policy}; pct=${next.pct}` : `p=${next.policy}`
}

/**
 * Unnamed hosts, or hosts without a PTR, whose mail never passes DMARC and that the status rules
 * (or the owner) call suspicious: one recommendation for all of them, since the remedy is the policy.
 */
function blockSpoofing(ctx: RuleContext, readiness: PolicyReadiness): Recommendation | null {
  const spoofing = ctx.input.sources.filter(
    (s) =>
      s.status === 'suspicious' &&
      !isForwarding(s) &&
      s.stats.messages > 0 &&
      s.stats.dmarcPass === 0 &&
      (s.stats.ptr === null || s.classification.service === null),
  )
  if (spoofing.length === 0) return null
  const sum = totals(spoofing)
  const unauthenticated = spoofing.filter((s) => s.stats.dkimPass === 0 && s.stats.spfPass === 0).length
  const failing = unauthenticated === spoofing.length ? 'failing SPF, DKIM and DMARC' : 'failing DMARC'
  const { policy, pct } = ctx.input.dmarc
  const next = nextPolicyStep(policy, pct)
  const notes = [
    `${countWithShare(ctx, sum.messages)} from ${plural(sum.ips, 'IP', 'IPs')} without a PTR or a known service.`,
  ]
  if (next === null) notes.push('p=reject already has receivers reject them.')
  else {
    notes.push(
      `With ${policyTags(ctx, next)} receivers would ${next.policy === 'none' ? 'report' : next.policy} them.`,
    )
    if (!readiness.ready) notes.push(`Before advancing: ${readiness.blockers.join('; ')}.`)
  }
  return {
    id: `block_spoofing:${ctx.domain}`,
    type: 'block_spoofing',
    // Spoofed mail is delivered under p=none (or no record); quarantine already holds most of it.
    priority: policy === 'none' || policy === 'missing' ? 'high' : next !== null ? 'medium' : 'low',
    title: `Block spoofing: ${plural(sum.ips, 'IP', 'IPs')} sent ${countWithShare(ctx, sum.messages)} ${failing} over ${plural(ctx.input.days, 'day', 'days')}: likely spoofing, safe to reject`,
    evidence: {
      ...sourceList(spoofing),
      ipCount: sum.ips,
      messages: sum.messages,
      unauthenticatedIps: unauthenticated,
      policy,
      pct,
      next,
      policyReady: readiness.ready,
    },
    effect: effect(ctx, sum.messages, notes.join(' ')),
    change:
      next === null
        ? { kind: 'none' }
        : { kind: 'dmarc_policy', record: `_dmarc.${ctx.domain}`, value: policyTags(ctx, next) },
  }
}

/** One recommendation per forwarding service (unnamed forwarders together): advice, no DNS change. */
function forwarding(ctx: RuleContext): Recommendation[] {
  const groups = new Map<string, SourceInput[]>()
  for (const source of ctx.input.sources) {
    if (!isForwarding(source) || source.stats.messages <= 0) continue
    const key = source.classification.service?.id ?? 'unidentified'
    groups.set(key, [...(groups.get(key) ?? []), source])
  }
  return [...groups].map(([key, group]): Recommendation => {
    const service = group[0]!.classification.service
    const name = service?.name ?? 'unidentified hosts'
    const sum = totals(group)
    const failing = sum.messages - sum.dmarcPass
    const survives = ratio(sum.dkimAligned, sum.messages)
    const arc = survives < ARC_RELEVANT_BELOW
    const notes = [
      `${countWithShare(ctx, failing)} fail DMARC after forwarding: the forwarder's IP is not in the domain's SPF, and only an unmodified DKIM signature carries alignment through.`,
    ]
    if (arc) {
      notes.push(
        `Under quarantine or reject they depend on receivers honouring the ARC seal (RFC 8617) of ${name} or trusting it locally; ${formatCount(sum.forwarded)} were reported with a forwarding override.`,
      )
    }
    return {
      id: `forwarding:${key}`,
      type: 'forwarding',
      priority: arc ? 'medium' : 'low',
      title: `Forwarding via ${name}: alignment breaks at ${name}, DKIM survives on ${formatPercent(sum.dkimAligned, sum.messages)} of ${plural(sum.messages, 'message', 'messages')}`,
      evidence: {
        ...sourceList(group),
        service: service?.id ?? null,
        ipCount: sum.ips,
        messages: sum.messages,
        dmarcPass: sum.dmarcPass,
        dkimAligned: sum.dkimAligned,
        forwarded: sum.forwarded,
        arcRelevant: arc,
      },
      effect: effect(ctx, failing, notes.join(' ')),
      change: service === null ? { kind: 'none' } : { kind: 'none', service: service.id },
    }
  })
}

/** Unknown-status volume with no other recommendation to act on: a list to go through. */
function unknownSources(ctx: RuleContext, covered: ReadonlySet<string>): Recommendation | null {
  const unknown = ctx.input.sources.filter(
    (s) => s.status === 'unknown' && !isForwarding(s) && s.stats.messages > 0 && !covered.has(s.stats.ip),
  )
  const sum = totals(unknown)
  const share = ratio(sum.messages, ctx.volume)
  if (share <= SIGNIFICANT_SHARE) return null
  return {
    id: `unknown_sources:${ctx.domain}`,
    type: 'unknown_sources',
    priority: share > UNKNOWN_MEDIUM_SHARE ? 'medium' : 'low',
    title: `Investigate ${plural(sum.ips, 'unknown source', 'unknown sources')}: ${countWithShare(ctx, sum.messages)} over ${plural(ctx.input.days, 'day', 'days')}`,
    evidence: { ...sourceList(unknown), ipCount: sum.ips, messages: sum.messages, dmarcPass: sum.dmarcPass },
    effect: effect(
      ctx,
      sum.messages,
      `Nobody has identified these senders, ${formatPercent(sum.dmarcPass, sum.messages)} of whose mail passes DMARC: mark each legitimate (then authorise it) or unwanted. Unknown sources above ${formatPercent(SIGNIFICANT_SHARE, 1)} of the volume that fail DMARC keep the policy from advancing.`,
    ),
    change: { kind: 'none' },
  }
}

function advancePolicy(ctx: RuleContext, readiness: PolicyReadiness): Recommendation | null {
  const next = readiness.next
  if (!readiness.ready || next === null) return null
  const { policy, pct } = ctx.input.dmarc
  const failing = readiness.messages - readiness.dmarcPass
  const over = `${formatPercent(readiness.dmarcPass, readiness.messages)} aligned over ${READINESS_WINDOW_DAYS} days (${plural(readiness.messages, 'message', 'messages')})`
  let title: string
  let description: string
  if (policy === 'missing') {
    title = 'Publish a DMARC policy: p=none starts monitoring without changing delivery'
    description = 'Receivers keep delivering as today and send aggregate reports.'
  } else {
    title =
      next.policy === policy
        ? `Policy can apply to all mail (pct ${pct} → ${next.pct}) at p=${policy}: ${over}`
        : `Policy can advance to ${next.policy}: ${over}`
    const share = formatPercent(failing, readiness.messages)
    description = `Receivers would ${next.policy} the ${plural(failing, 'message', 'messages')} (${share}) that failed DMARC over the last ${READINESS_WINDOW_DAYS} days.`
  }
  return {
    id: `advance_policy:${ctx.domain}`,
    type: 'advance_policy',
    priority: 'medium',
    title,
    evidence: {
      policy,
      pct,
      next,
      passRate: readiness.passRate,
      messages: readiness.messages,
      dmarcPass: readiness.dmarcPass,
      days: readiness.days,
    },
    // The 14-day window, not the reporting period, is what this rests on: share is of its volume.
    effect: { messages: failing, share: ratio(failing, readiness.messages), description },
    change: { kind: 'dmarc_policy', record: `_dmarc.${ctx.domain}`, value: policyTags(ctx, next) },
  }
}

/** Every recommendation for one domain, sorted by priority, then messages concerned, then id. */
export function sourceRecommendations(
  input: IntelligenceInput,
  index: CatalogIndex = SHIPPED_CATALOG_INDEX,
): Recommendation[] {
  const ctx: RuleContext = {
    input,
    domain: normalizeName(input.domain),
    volume: input.sources.reduce((sum, s) => sum + s.stats.messages, 0),
  }
  const readiness = policyReadiness(input.daily, input.sources, input.dmarc.policy, input.dmarc.pct)
  const services = serviceRecommendations(ctx, index)
  const all = [
    ...services.recommendations,
    blockSpoofing(ctx, readiness),
    ...forwarding(ctx),
    unknownSources(ctx, services.covered),
    advancePolicy(ctx, readiness),
  ]
  return all.filter((r): r is Recommendation => r !== null).sort(compareRecommendations)
}
