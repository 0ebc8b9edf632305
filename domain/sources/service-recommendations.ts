// Recommendations about a known sending service the domain uses: authorise it in SPF
// (`authorize_service`) and have it sign with the domain's DKIM key (`enable_dkim`). Sources are
// grouped by service, since a provider sends from many IPs and is set up once for all of them.

import { MAX_DNS_TERMS } from '../spf/limits.ts'
import { type CatalogIndex, normalizeName, type SendingService } from './catalog.ts'
import { formatCount, formatPercent, ratio } from './figures.ts'
import {
  compareText,
  countWithShare,
  effect,
  isForwarding,
  type Recommendation,
  type RuleContext,
  type SourceInput,
  type Totals,
  totals,
  withinDomain,
} from './recommendation.ts'

/** Below this DMARC pass rate a service's mail is failing, not merely missing the odd message. */
export const FAILING_PASS_RATE = 0.9
/** Below this share of DKIM-aligned messages the service is not signing for the domain. */
export const DKIM_ALIGNED_RATE = 0.5
/** A fix is urgent (high) when the failing messages are at least this share of the domain's volume. */
export const URGENT_SHARE = 0.01

/** Own sending of a known, non-forwarding service, at medium confidence or better, not marked unwanted. */
function byService(sources: readonly SourceInput[]): Map<string, SourceInput[]> {
  const groups = new Map<string, SourceInput[]>()
  for (const source of sources) {
    const service = source.classification.service
    if (service === null || service.forwarder || isForwarding(source)) continue
    if (source.classification.confidence === 'low' || source.status === 'suspicious') continue
    if (source.stats.messages <= 0) continue
    groups.set(service.id, [...(groups.get(service.id) ?? []), source])
  }
  return groups
}

const unique = (values: Iterable<string>) => [...new Set(values)].sort(compareText)

function urgency(ctx: RuleContext, failing: number): Recommendation['priority'] {
  return ratio(failing, ctx.volume) >= URGENT_SHARE ? 'high' : 'medium'
}

/**
 * The include fixes SPF alignment only when the MAIL FROM is the policy domain or under it
 * (relaxed alignment, RFC 7489 §3.1.2); the include then goes into that name's record. A provider
 * MAIL FROM (bounces.sendgrid.net) cannot align whatever the domain publishes: null, and DKIM is
 * recommended instead.
 */
function authorizeService(
  ctx: RuleContext,
  service: SendingService,
  group: readonly SourceInput[],
  sum: Totals,
): Recommendation | null {
  if (ratio(sum.dmarcPass, sum.messages) >= FAILING_PASS_RATE || service.spfIncludes.length === 0) return null
  const published = new Set(ctx.input.spf.includes.map(normalizeName))
  if (service.spfIncludes.some((include) => published.has(include))) return null
  const ours = unique(group.flatMap((s) => s.stats.spfDomains.map(normalizeName))).filter((name) =>
    withinDomain(name, ctx.domain),
  )
  if (ours.length === 0) return null

  const target = ours.includes(ctx.domain) ? ctx.domain : ours[0]!
  const [include, ...otherIncludes] = service.spfIncludes
  const term = `include:${include}`
  // The input describes the policy domain's record only; a subdomain's record is not known here.
  const known = target === ctx.domain
  const before = known ? ctx.input.spf.lookups : null
  // +1 for the include term itself; the included record's own lookups come on top (a lower bound).
  const after = before === null ? null : before + 1
  const overLimit = after !== null && after > MAX_DNS_TERMS
  const failing = sum.messages - sum.dmarcPass

  let title: string
  if (!known) title = `Authorise ${service.name}: add ${term} to the SPF record of ${target}`
  else if (ctx.input.spf.record === null)
    title = `Authorise ${service.name}: publish an SPF record with ${term} (SPF lookups ${before} → ${after})`
  else {
    const limit = overLimit ? `, over the limit of ${MAX_DNS_TERMS}: flatten or manage the record` : ''
    title = `Authorise ${service.name}: add ${term} (SPF lookups ${before} → ${after}${limit})`
  }
  const notes = [
    `${countWithShare(ctx, failing)} from ${service.name} fail DMARC (${formatPercent(sum.dmarcPass, sum.messages)} pass); with ${term} they pass SPF, aligned through MAIL FROM ${target}.`,
  ]
  if (overLimit) {
    notes.push(`${after} lookups exceed RFC 7208's ${MAX_DNS_TERMS}: receivers would return permerror.`)
  }
  if (sum.dmarcPass === 0) {
    notes.push(`None of its mail passes DMARC yet: confirm the ${service.name} account is yours first.`)
  }
  return {
    id: `authorize_service:${service.id}`,
    type: 'authorize_service',
    priority: urgency(ctx, failing),
    title,
    evidence: {
      service: service.id,
      ipCount: sum.ips,
      messages: sum.messages,
      dmarcPass: sum.dmarcPass,
      spfAligned: sum.spfAligned,
      dkimAligned: sum.dkimAligned,
      spfDomain: target,
      include,
      otherIncludes,
      spfRecordPublished: ctx.input.spf.record !== null,
      lookupsBefore: before,
      lookupsAfter: after,
      lookupLimit: MAX_DNS_TERMS,
    },
    effect: effect(ctx, failing, notes.join(' ')),
    change: { kind: 'spf_add_include', record: target, value: term, service: service.id, docs: service.docs },
  }
}

function enableDkim(
  ctx: RuleContext,
  service: SendingService,
  group: readonly SourceInput[],
  sum: Totals,
  spfFixOffered: boolean,
): Recommendation | null {
  const dmarcFailing = ratio(sum.dmarcPass, sum.messages) < FAILING_PASS_RATE
  // Failing DMARC with no SPF fix on offer leaves DKIM as the only way to align, whatever its rate.
  const needed = ratio(sum.dkimAligned, sum.messages) < DKIM_ALIGNED_RATE || (dmarcFailing && !spfFixOffered)
  if (!needed) return null

  const selector = service.dkimSelectors[0]
  const unaligned = sum.messages - sum.dkimAligned
  const foreign = unique(group.flatMap((s) => s.stats.dkimDomains.map(normalizeName))).filter(
    (name) => !withinDomain(name, ctx.domain),
  )
  const aligned = `${formatPercent(sum.dkimAligned, sum.messages)} of its ${formatCount(sum.messages)} messages are DKIM-aligned`
  const notes = [
    `${countWithShare(ctx, unaligned)} from ${service.name} would carry a DKIM signature aligned with ${ctx.domain}, which passes DMARC and survives forwarding.`,
  ]
  if (foreign.length > 0) {
    notes.push(
      `It signs with its own domain (d=${foreign.join(', d=')}), which does not align: set up a custom signing domain.`,
    )
  }
  return {
    id: `enable_dkim:${service.id}`,
    type: 'enable_dkim',
    // DMARC already passing (through SPF) makes DKIM hardening rather than a fix.
    priority: dmarcFailing ? urgency(ctx, sum.messages - sum.dmarcPass) : 'medium',
    title: `Enable DKIM at ${service.name}${selector === undefined ? '' : ` (selector ${selector})`}: ${aligned}`,
    evidence: {
      service: service.id,
      ipCount: sum.ips,
      messages: sum.messages,
      dmarcPass: sum.dmarcPass,
      dkimAligned: sum.dkimAligned,
      dkimPass: sum.dkimPass,
      signingDomains: foreign,
      selectors: service.dkimSelectors,
    },
    effect: effect(ctx, unaligned, notes.join(' ')),
    change: {
      kind: 'dkim_enable',
      ...(selector === undefined ? {} : { record: `${selector}._domainkey.${ctx.domain}`, selector }),
      service: service.id,
      docs: service.docs,
    },
  }
}

/**
 * The recommendations, and the IPs they cover: a source with a concrete action (authorise it, have
 * it sign) is left out of the `unknown_sources` list, whose question it already asks.
 */
export function serviceRecommendations(
  ctx: RuleContext,
  index: CatalogIndex,
): { recommendations: Recommendation[]; covered: Set<string> } {
  const recommendations: Recommendation[] = []
  const covered = new Set<string>()
  for (const [id, group] of byService(ctx.input.sources)) {
    // A classification made against another catalog version may name a service no longer listed.
    const service = index.services.get(id)
    if (service === undefined) continue
    const sum = totals(group)
    const authorize = authorizeService(ctx, service, group, sum)
    const dkim = enableDkim(ctx, service, group, sum, authorize !== null)
    for (const rec of [authorize, dkim]) if (rec !== null) recommendations.push(rec)
    if (authorize !== null || dkim !== null) for (const s of group) covered.add(s.stats.ip)
  }
  return { recommendations, covered }
}
