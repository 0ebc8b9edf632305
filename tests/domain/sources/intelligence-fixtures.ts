// Builders for the source-intelligence tests: per-IP figures classified against the shipped
// catalog, with the status the classifier's own rules give unless a test forces one.

import { SHIPPED_CATALOG_INDEX } from '../../../domain/sources/catalog.ts'
import {
  type Classification,
  type Confidence,
  type SourceStatus,
  statusOf,
} from '../../../domain/sources/classify.ts'
import type { IntelligenceInput, SourceInput } from '../../../domain/sources/intelligence.ts'
import type { DailyVolume } from '../../../domain/sources/policy-readiness.ts'
import type { SourceStats } from '../../../domain/sources/source-stats.ts'

export function classification(serviceId: string | null, confidence: Confidence = 'high'): Classification {
  if (serviceId === null) return { service: null, confidence: 'low', evidence: [] }
  const s = SHIPPED_CATALOG_INDEX.services.get(serviceId)
  if (s === undefined) throw new Error(`no catalog service ${serviceId}`)
  return {
    service: { id: s.id, name: s.name, category: s.category, docs: s.docs, forwarder: s.forwarder },
    confidence,
    evidence: [],
  }
}

export interface SourceOptions {
  service?: string | null
  confidence?: Confidence
  status?: SourceStatus
}

export function source(ip: string, fields: Partial<SourceStats>, options: SourceOptions = {}): SourceInput {
  const stats: SourceStats = {
    ip,
    messages: 0,
    dmarcPass: 0,
    dkimAligned: 0,
    spfAligned: 0,
    dkimPass: 0,
    spfPass: 0,
    forwarded: 0,
    quarantined: 0,
    rejected: 0,
    firstSeen: '2026-10-26',
    lastSeen: '2026-11-24',
    ptr: null,
    dkimDomains: [],
    spfDomains: [],
    ...fields,
  }
  const c = classification(options.service ?? null, options.confidence)
  const status =
    options.status ??
    statusOf(c, { messages: stats.messages, dmarcPass: stats.dmarcPass, hasPtr: stats.ptr !== null }, null)
  return { stats, classification: c, status }
}

/** `count` consecutive days ending on `last`, each with the same figures. */
export function days(count: number, messages: number, dmarcPass: number, last = '2026-11-24'): DailyVolume[] {
  const end = Date.parse(`${last}T00:00:00Z`)
  return Array.from({ length: count }, (_, i) => ({
    day: new Date(end - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10),
    messages,
    dmarcPass,
  }))
}

/** A domain that is mostly in order: Google Workspace aligned, a clean 14-day history. */
export function input(fields: Partial<IntelligenceInput> = {}): IntelligenceInput {
  return {
    domain: 'example.com',
    days: 30,
    sources: [google(10_000)],
    spf: { record: 'v=spf1 include:_spf.google.com ~all', lookups: 4, includes: ['_spf.google.com'] },
    dmarc: { policy: 'none', pct: null },
    daily: days(14, 1_000, 995),
    ...fields,
  }
}

/** Google Workspace sending for the domain, fully aligned. */
export const google = (messages: number, ip = '209.85.220.41') =>
  source(
    ip,
    {
      messages,
      dmarcPass: messages,
      dkimAligned: messages,
      spfAligned: messages,
      dkimPass: messages,
      spfPass: messages,
      ptr: 'mail-sor-f41.google.com',
      dkimDomains: ['example.com'],
      spfDomains: ['example.com'],
    },
    { service: 'google_workspace' },
  )

/** A deterministic shuffle (reverse, then rotate), so "order does not matter" is tested reproducibly. */
export function shuffled<T>(items: readonly T[], rotate = 3): T[] {
  const reversed = [...items].reverse()
  const k = reversed.length === 0 ? 0 : rotate % reversed.length
  return [...reversed.slice(k), ...reversed.slice(0, k)]
}
