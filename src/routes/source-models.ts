import { t } from 'elysia'
import type { Period } from '../../domain/reports/period.ts'
import type { ServiceGroup, SourceView } from '../../domain/sources/list-sources.ts'
import type { PolicyReadiness } from '../../domain/sources/policy-readiness.ts'
import type { Recommendation } from '../../domain/sources/recommendation.ts'
import { JsonObject, PageMeta } from '../../plugins/api-models.ts'
import { LatestReportAt } from './reports.ts'

// API shapes of the sources endpoints (issue #5) and the presenters that produce them. Rates and
// shares are percentages of messages with two decimals, as in the report summary
// (`GET /dmarc-reports/domains/{domain}/summary`); keys are snake_case.

/** Percent of `whole`, two decimals; 0 without volume (a listed source always has some). */
export const percent = (part: number, whole: number) =>
  whole > 0 ? Math.round((part / whole) * 10000) / 100 : 0

/** A fraction (0..1) as a percent with two decimals. */
const percentOf = (fraction: number) => Math.round(fraction * 10000) / 100

export const PeriodModel = t.Object({ from: t.String({ format: 'date' }), to: t.String({ format: 'date' }) })

const SourceStatus = t.UnionEnum(['legitimate', 'unknown', 'suspicious', 'forwarder'], {
  description: '`suspicious` also for sources the owner marked `unwanted`',
})
export const OverrideStatus = t.UnionEnum(['legitimate', 'unwanted', 'forwarder'])

// Request fields use unions of literals: t.UnionEnum carries its first value as `default`, which
// Elysia would fill in for an absent field (an absent `status` filter would list only legitimate).
export const StatusFilter = t.Union([
  t.Literal('legitimate'),
  t.Literal('unknown'),
  t.Literal('suspicious'),
  t.Literal('forwarder'),
])
export const OverrideStatusInput = t.Union([
  t.Literal('legitimate'),
  t.Literal('unwanted'),
  t.Literal('forwarder'),
])

export const SourceModel = t.Object({
  ip: t.String({ examples: ['209.85.220.41'] }),
  ptr: t.Nullable(
    t.String({ description: 'Reverse DNS name, not forward-confirmed; null when none or not looked up yet' }),
  ),
  service: t.Nullable(t.Object({ id: t.String(), name: t.String(), category: t.String(), docs: t.String() })),
  confidence: t.UnionEnum(['high', 'medium', 'low']),
  evidence: t.Array(
    t.Object({
      kind: t.UnionEnum(['network', 'ptr', 'spf_include', 'dkim_domain']),
      value: t.String(),
      service: t.String(),
    }),
  ),
  status: SourceStatus,
  override: t.Nullable(
    t.Object({
      status: OverrideStatus,
      note: t.Nullable(t.String()),
      updated_at: t.String({ format: 'date-time' }),
    }),
  ),
  messages: t.Integer(),
  share: t.Number({ description: 'Percent of the domain’s messages in the period' }),
  rates: t.Object(
    {
      dmarc_pass: t.Number(),
      spf_pass: t.Number({ description: 'SPF passed, aligned or not' }),
      spf_aligned: t.Number(),
      dkim_pass: t.Number({ description: 'Some DKIM signature passed, aligned or not' }),
      dkim_aligned: t.Number(),
    },
    { description: 'Percent of the source’s messages (weighted by count), two decimals' },
  ),
  dispositions: t.Object({ none: t.Integer(), quarantine: t.Integer(), reject: t.Integer() }),
  forwarded: t.Integer({ description: 'Messages a reporter named a forwarding override for' }),
  first_seen: t.String({ format: 'date' }),
  last_seen: t.String({ format: 'date' }),
  dkim_domains: t.Array(t.String(), { description: 'd= domains that passed for this IP (at most 8)' }),
  spf_domains: t.Array(t.String(), { description: 'Domains SPF was checked for (at most 8)' }),
})

export const ServiceGroupModel = t.Object({
  id: t.Nullable(t.String({ description: 'Catalog id; null for the sources no service matched' })),
  name: t.String(),
  category: t.Nullable(t.String()),
  sources: t.Integer(),
  messages: t.Integer(),
  share: t.Number({ description: 'Percent of the domain’s messages' }),
  dmarc_pass_rate: t.Number({ description: 'Percent of the service’s messages passing DMARC' }),
})

export function presentSource(view: SourceView, volume: number) {
  const { stats, classification, override } = view
  const service = classification.service
  return {
    ip: stats.ip,
    ptr: stats.ptr,
    service:
      service === null
        ? null
        : { id: service.id, name: service.name, category: service.category, docs: service.docs },
    confidence: classification.confidence,
    evidence: classification.evidence,
    status: view.status,
    override:
      override === null
        ? null
        : { status: override.status, note: override.note, updated_at: override.updatedAt.toISOString() },
    messages: stats.messages,
    share: percent(stats.messages, volume),
    rates: {
      dmarc_pass: percent(stats.dmarcPass, stats.messages),
      spf_pass: percent(stats.spfPass, stats.messages),
      spf_aligned: percent(stats.spfAligned, stats.messages),
      dkim_pass: percent(stats.dkimPass, stats.messages),
      dkim_aligned: percent(stats.dkimAligned, stats.messages),
    },
    dispositions: {
      none: Math.max(0, stats.messages - stats.quarantined - stats.rejected),
      quarantine: stats.quarantined,
      reject: stats.rejected,
    },
    forwarded: stats.forwarded,
    first_seen: stats.firstSeen,
    last_seen: stats.lastSeen,
    dkim_domains: stats.dkimDomains,
    spf_domains: stats.spfDomains,
  }
}

export const presentServiceGroup = (group: ServiceGroup) => ({
  id: group.id,
  name: group.name,
  category: group.category,
  sources: group.sources,
  messages: group.messages,
  share: percentOf(group.share),
  dmarc_pass_rate: percent(group.dmarcPass, group.messages),
})

export const SourceListModel = t.Object({
  data: t.Array(SourceModel),
  meta: t.Object({
    ...PageMeta.properties,
    period: PeriodModel,
    services: t.Array(ServiceGroupModel, { description: 'All sources of the period by service' }),
    latest_report_at: LatestReportAt,
  }),
})

const RecommendationModel = t.Object({
  id: t.String({ examples: ['authorize_service:sendgrid'] }),
  type: t.UnionEnum([
    'authorize_service',
    'enable_dkim',
    'block_spoofing',
    'forwarding',
    'advance_policy',
    'unknown_sources',
  ]),
  priority: t.UnionEnum(['high', 'medium', 'low']),
  title: t.String(),
  evidence: JsonObject({ description: 'The figures behind the title; the shape depends on the type' }),
  effect: t.Object({
    messages: t.Integer(),
    share: t.Number({ description: 'Percent of the domain’s messages' }),
    description: t.String(),
  }),
  change: t.Object({
    kind: t.UnionEnum(['spf_add_include', 'spf_add_ip', 'dkim_enable', 'dmarc_policy', 'block', 'none']),
    record: t.Optional(t.String()),
    value: t.Optional(t.String()),
    service: t.Optional(t.String()),
    selector: t.Optional(t.String()),
    docs: t.Optional(t.String()),
  }),
})

const ReadinessModel = t.Object({
  ready: t.Boolean(),
  next: t.Nullable(t.Object({ policy: t.String(), pct: t.Integer() })),
  pass_rate: t.Nullable(t.Number({ description: 'Percent over the last 14 days' })),
  messages: t.Integer(),
  dmarc_pass: t.Integer(),
  days: t.Integer({ description: 'Days of the 14-day window with report data' }),
  blockers: t.Array(t.String()),
})

export const IntelligenceModel = t.Object({
  data: t.Array(RecommendationModel),
  meta: t.Object({
    ...PageMeta.properties,
    period: PeriodModel,
    readiness: ReadinessModel,
    latest_report_at: LatestReportAt,
  }),
})

/**
 * `ipCount` → `ip_count`, recursively over objects and arrays; values are kept as JSON would send
 * them (a Date as its ISO text, undefined properties left out, undefined items and non-finite
 * numbers as null), so the result is exactly the `JsonValue` its schema promises.
 */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : snakeCaseKeys(item)))
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .map(([key, inner]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeCaseKeys(inner)]),
  )
}

export function presentRecommendation(r: Recommendation) {
  const evidence = snakeCaseKeys(r.evidence) as Record<string, unknown>
  if (typeof evidence.pass_rate === 'number') evidence.pass_rate = percentOf(evidence.pass_rate)
  return {
    id: r.id,
    type: r.type,
    priority: r.priority,
    title: r.title,
    evidence,
    effect: { ...r.effect, share: percentOf(r.effect.share) },
    change: r.change,
  }
}

export const presentReadiness = (r: PolicyReadiness) => ({
  ready: r.ready,
  next: r.next,
  pass_rate: r.passRate === null ? null : percentOf(r.passRate),
  messages: r.messages,
  dmarc_pass: r.dmarcPass,
  days: r.days,
  blockers: r.blockers,
})

export const presentPeriod = (period: Period) => ({ from: period.from, to: period.to })
