// The report figures the sources, alerts and policy use cases read (the daily rollups), tenant-scoped
// by account and domain (implemented by infrastructure/repositories/pg-source-stats.ts).

import type { Period } from '../reports/period.ts'
import type { SourceOverride } from './classify.ts'
import type { OverrideEntry } from './list-sources.ts'
import type { DailyVolume } from './policy-readiness.ts'
import type { SourceStats } from './source-stats.ts'

export interface FigureScope {
  accountId: string
  domainId: number
}

export interface SourceFigures {
  /** One entry per source IP that sent in the period (only `ip` when given). */
  stats(scope: FigureScope, period: Period & { ip?: string }): Promise<SourceStats[]>
  /** The owner's verdicts on the domain's source IPs. */
  overrides(scope: FigureScope): Promise<OverrideEntry[]>
  daily(scope: FigureScope, period: Period): Promise<DailyVolume[]>
  /** Sets (status null: removes) the verdict on one IP; the stored override, null when removed. */
  setOverride(
    scope: FigureScope,
    input: { ip: string; status: SourceOverride | null; note?: string | null; now: Date },
  ): Promise<OverrideEntry | null>
}
