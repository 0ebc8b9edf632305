// The recommendations of a domain (issue #5, `GET /domains/{domain}/sources/intelligence`): reads
// the period's sources, the published SPF and DMARC records and the daily totals through ports,
// and hands them to the pure rules (intelligence.ts, policy-readiness.ts).

import type { Period } from '../reports/period.ts'
import { branchLookups } from '../spf/include-tree.ts'
import { type Recommendation, sourceRecommendations } from './intelligence.ts'
import { classifyStats, type SourceDeps } from './list-sources.ts'
import {
  type DailyVolume,
  type DmarcPolicyState,
  type PolicyReadiness,
  policyReadiness,
  READINESS_WINDOW_DAYS,
} from './policy-readiness.ts'
import { topLevelIncludes } from './spf-evidence.ts'

export interface IntelligenceDeps extends SourceDeps {
  /** Domain totals of the days that have reports, in the period given. */
  daily: (period: Period) => Promise<DailyVolume[]>
  /** The DMARC policy that applies to the domain as published (RFC 9989 §4.10.1). */
  dmarcPolicy: (domain: string) => Promise<{ policy: DmarcPolicyState; pct: number | null }>
}

export interface SourceIntelligence {
  recommendations: Recommendation[]
  readiness: PolicyReadiness
}

const DAY = 86_400_000
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`)

/**
 * Every day from the first one with reports to `to`, zero days included: policyReadiness counts
 * the days of its window that have an entry, and a quiet day after monitoring began is data (no
 * mail), not missing history. Days before the first report stay absent, so a domain monitored for
 * a week shows a week of history.
 */
export function dailySeries(rows: readonly DailyVolume[], to: string): DailyVolume[] {
  const first = rows[0]
  if (first === undefined) return []
  const byDay = new Map<string, DailyVolume>()
  for (const row of rows) {
    const known = byDay.get(row.day)
    byDay.set(
      row.day,
      known === undefined
        ? { ...row }
        : { ...known, messages: known.messages + row.messages, dmarcPass: known.dmarcPass + row.dmarcPass },
    )
  }
  const series: DailyVolume[] = []
  const last = Math.max(dayMs(to), dayMs(rows.at(-1)!.day))
  for (let ms = dayMs(first.day); ms <= last; ms += DAY) {
    const day = isoDay(ms)
    series.push(byDay.get(day) ?? { day, messages: 0, dmarcPass: 0 })
  }
  return series
}

/** The period's length in days (inclusive). */
export const periodDays = (period: Period) => Math.round((dayMs(period.to) - dayMs(period.from)) / DAY) + 1

export async function sourceIntelligence(
  deps: IntelligenceDeps,
  input: { domain: string; period: Period },
): Promise<SourceIntelligence> {
  // Readiness looks at the last 14 days whatever the period asked for.
  const windowStart = dayMs(input.period.to) - (READINESS_WINDOW_DAYS - 1) * DAY
  const dailyFrom = isoDay(Math.min(windowStart, dayMs(input.period.from)))
  // One walk of the SPF tree serves both the classification evidence and the record's lookups.
  const [stats, overrides, spfTree, daily, dmarc] = await Promise.all([
    deps.stats(input.period),
    deps.overrides(),
    deps.spfTree(input.domain),
    deps.daily({ from: dailyFrom, to: input.period.to }),
    deps.dmarcPolicy(input.domain),
  ])
  const sources = classifyStats({ domain: input.domain, stats, overrides, spfTree }, deps.catalog)
  const series = dailySeries(daily, input.period.to)
  const published = spfTree !== null && spfTree.status === 'ok' ? spfTree : null
  const recommendations = sourceRecommendations(
    {
      domain: input.domain,
      days: periodDays(input.period),
      sources,
      spf: {
        record: published?.text ?? null,
        lookups: published === null ? 0 : branchLookups(published),
        includes: topLevelIncludes(published),
      },
      dmarc,
      daily: series,
    },
    deps.catalog,
  )
  return { recommendations, readiness: policyReadiness(series, sources, dmarc.policy, dmarc.pct) }
}
