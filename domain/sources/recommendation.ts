// The shape of a source recommendation (issue #5, `GET /domains/{domain}/sources/intelligence`)
// and the figures every rule works from. The rules themselves live in intelligence.ts and
// service-recommendations.ts; docs/sources.md ("Recommendations") states them in prose.

import type { Classification, SourceStatus } from './classify.ts'
import { formatCount, formatPercent, ratio } from './figures.ts'
import type { DailyVolume, DmarcPolicyState } from './policy-readiness.ts'
import type { SourceStats } from './source-stats.ts'

export interface SourceInput {
  stats: SourceStats
  classification: Classification
  status: SourceStatus
}

export interface IntelligenceInput {
  /** The policy domain (header From domain) the reports are about. */
  domain: string
  /** Length of the period `sources` covers, for the wording only. */
  days: number
  sources: readonly SourceInput[]
  spf: {
    /** The published SPF record of `domain`, null when there is none. */
    record: string | null
    /** Worst-case DNS-querying terms of one evaluation (SpfAnalysis.lookups). */
    lookups: number
    /** `include:` targets of the published record, top level only. */
    includes: readonly string[]
  }
  dmarc: { policy: DmarcPolicyState; pct: number | null }
  /** Domain totals per day, every day of at least the last 14 (zero days included). */
  daily: readonly DailyVolume[]
}

export type RecommendationType =
  | 'authorize_service'
  | 'enable_dkim'
  | 'block_spoofing'
  | 'forwarding'
  | 'advance_policy'
  | 'unknown_sources'

export type Priority = 'high' | 'medium' | 'low'

export interface RecommendedChange {
  kind: 'spf_add_include' | 'spf_add_ip' | 'dkim_enable' | 'dmarc_policy' | 'block' | 'none'
  /** The DNS name whose record changes: `example.com`, `_dmarc.example.com`, `s1._domainkey.example.com`. */
  record?: string
  /** The term or tags to add or set: `include:sendgrid.net`, `p=quarantine`, `pct=100`. */
  value?: string
  /** Catalog id of the sending service concerned. */
  service?: string
  selector?: string
  /** The provider's setup documentation. */
  docs?: string
}

export interface Recommendation {
  /** `type:subject`, stable across runs so a client (or an alert) can follow one recommendation. */
  id: string
  type: RecommendationType
  priority: Priority
  title: string
  /** The figures the title and priority are based on. */
  evidence: Record<string, unknown>
  effect: {
    /** Messages whose outcome the change would alter (or, for advice, that the finding concerns). */
    messages: number
    /** `messages` over the domain's volume for the period. */
    share: number
    description: string
  }
  change: RecommendedChange
}

/** The per-IP counts summed over a group of sources (a service, the spoofing IPs...). */
export interface Totals {
  ips: number
  messages: number
  dmarcPass: number
  dkimAligned: number
  spfAligned: number
  dkimPass: number
  spfPass: number
  forwarded: number
}

export function totals(sources: readonly SourceInput[]): Totals {
  const sum: Totals = {
    ips: 0,
    messages: 0,
    dmarcPass: 0,
    dkimAligned: 0,
    spfAligned: 0,
    dkimPass: 0,
    spfPass: 0,
    forwarded: 0,
  }
  for (const { stats } of sources) {
    sum.ips += 1
    sum.messages += stats.messages
    sum.dmarcPass += stats.dmarcPass
    sum.dkimAligned += stats.dkimAligned
    sum.spfAligned += stats.spfAligned
    sum.dkimPass += stats.dkimPass
    sum.spfPass += stats.spfPass
    sum.forwarded += stats.forwarded
  }
  return sum
}

/** Everything a rule needs besides its own sources: computed once per call. */
export interface RuleContext {
  input: IntelligenceInput
  /** The policy domain, lower-case without the root dot. */
  domain: string
  /** All messages of all sources: the denominator of every `share`. */
  volume: number
}

export function effect(ctx: RuleContext, messages: number, description: string): Recommendation['effect'] {
  return { messages, share: ratio(messages, ctx.volume), description }
}

/** `1,234 messages (5.2%)` — a count with its share of the domain's volume. */
export const countWithShare = (ctx: RuleContext, messages: number) =>
  `${formatCount(messages)} ${messages === 1 ? 'message' : 'messages'} (${formatPercent(messages, ctx.volume)})`

/** `name` is `domain` or under it, on a label boundary. */
export const withinDomain = (name: string, domain: string) => name === domain || name.endsWith(`.${domain}`)

// Code-unit order, not locale order: the same input must give the same output on every host.
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Heaviest first, then by IP: the order of every list of sources inside evidence and blockers. */
export const compareSources = (a: SourceInput, b: SourceInput) =>
  b.stats.messages - a.stats.messages || compareText(a.stats.ip, b.stats.ip)

const PRIORITY_ORDER: Record<Priority, number> = { high: 0, medium: 1, low: 2 }

/** Priority, then the messages concerned (most first), then id. */
export const compareRecommendations = (a: Recommendation, b: Recommendation) =>
  PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority] ||
  b.effect.messages - a.effect.messages ||
  compareText(a.id, b.id)

/**
 * A forwarder's IP, not a sender of the domain: a forwarding service, a user-marked forwarder, or an
 * IP whose reports named a forwarding override. Only the forwarding rule speaks about these; an
 * include for a forwarder's IPs would authorise everyone's mail relayed through it.
 */
export const isForwarding = (source: SourceInput) =>
  source.classification.service?.forwarder === true ||
  source.status === 'forwarder' ||
  source.stats.forwarded > 0

/** Evidence lists stay readable: the heaviest entries, with the number left out. */
export const EVIDENCE_LIST_LIMIT = 20
