import { type Static, t } from 'elysia'
import type { Period } from '../../domain/reports/period.ts'
import type { ProposalSimulation } from '../../domain/sources/simulate-proposal.ts'
import { Line } from '../../plugins/input-schemas.ts'
import { PeriodModel, snakeCaseKeys } from './source-models.ts'

// API shapes of `POST /domains/{domain}/simulate` (docs/simulation.md has the meaning of every
// figure): the domain's simulation results with snake_case keys. The one share is a percentage
// with two decimals, like every rate of the sources API.

/** Per-source rows of a DMARC simulation returned at most (totals always cover every source). */
export const MAX_LISTED_DMARC_SOURCES = 500

const Count = t.Object({ sources: t.Integer(), messages: t.Integer() })
const Dispositions = t.Object({ quarantined: t.Integer(), rejected: t.Integer() })
const DispositionGroup = t.Object({
  sources: t.Integer(),
  failing: t.Integer(),
  quarantined: t.Integer(),
  rejected: t.Integer(),
})
const Policy = t.UnionEnum(['none', 'quarantine', 'reject'])

const SpfSource = t.Object({
  ip: t.String(),
  messages: t.Integer(),
  dmarc_pass: t.Integer(),
  dkim_aligned: t.Integer(),
  spf_aligned: t.Integer(),
  current_spf_aligned_share: t.Number({ description: 'Percent of messages SPF-aligned in the reports' }),
  spf_domains: t.Array(t.String()),
  proposed: t.Nullable(
    t.UnionEnum(['pass', 'fail', 'softfail', 'neutral', 'none', 'permerror', 'temperror'], {
      description: 'check_host() against the proposal; null when unaffected',
    }),
  ),
  mechanism: t.Nullable(t.String()),
  reason: t.Nullable(t.String()),
  outcome: t.UnionEnum(['newly_failing', 'newly_passing', 'unchanged', 'unaffected']),
  newly_failing: t.Integer(),
  newly_passing: t.Integer(),
  would_pass_dmarc: t.Integer(),
})

const SpfSimulationModel = t.Object({
  domain: t.String(),
  proposed_record: t.String(),
  lookups: t.Integer(),
  lookup_limit: t.Integer(),
  record_problems: t.Array(
    t.Object({
      code: t.String(),
      severity: t.String(),
      domain: t.String(),
      term: t.Optional(t.String()),
      message: t.String(),
    }),
  ),
  sources: t.Array(SpfSource),
  newly_failing: t.Array(SpfSource),
  newly_passing: t.Array(SpfSource),
  totals: t.Object({
    sources: t.Integer(),
    messages: t.Integer(),
    currently_passing_dmarc: t.Integer(),
    would_pass_dmarc: t.Integer(),
    newly_failing: Count,
    newly_passing: Count,
    unaffected: Count,
    permerror: t.Integer(),
    temperror: t.Integer(),
  }),
  truncated: t.Boolean({ description: 'More than 500 sources: the smallest were not evaluated' }),
  total_sources: t.Integer(),
  skipped_messages: t.Integer(),
})

const DmarcSimulationModel = t.Object({
  proposed_record: t.String(),
  policy: Policy,
  pct: t.Integer(),
  testing: t.Boolean(),
  disposition: t.Object({ sampled: Policy, rest: Policy }),
  findings: t.Array(t.Object({ code: t.String(), severity: t.String(), message: t.String() })),
  sources: t.Array(
    t.Object({
      ip: t.String(),
      messages: t.Integer(),
      dmarc_pass: t.Integer(),
      failing: t.Integer(),
      looks_legitimate: t.Boolean(),
      current: Dispositions,
      proposed: Dispositions,
    }),
    { description: `The ${MAX_LISTED_DMARC_SOURCES} most affected sources at most` },
  ),
  total_sources: t.Integer(),
  totals: t.Object({
    sources: t.Integer(),
    messages: t.Integer(),
    failing: t.Integer(),
    current: Dispositions,
    proposed: Dispositions,
    collateral: DispositionGroup,
    likely_spoofing: DispositionGroup,
  }),
})

export const SimulateBody = t.Object({
  spf_record: t.Optional(Line({ maxLength: 4096, examples: ['v=spf1 include:_spf.google.com -all'] })),
  dmarc_record: t.Optional(Line({ maxLength: 4096, examples: ['v=DMARC1; p=quarantine'] })),
  days: t.Optional(
    t.Integer({ minimum: 1, maximum: 90, default: 30, description: 'Days of reports replayed' }),
  ),
})

export const SimulationModel = t.Object({
  data: t.Object({
    period: PeriodModel,
    spf: t.Optional(SpfSimulationModel),
    dmarc: t.Optional(DmarcSimulationModel),
  }),
})

const percentOf = (fraction: number) => Math.round(fraction * 10000) / 100

/** The key conversion is generic, so the result is typed by the model it is checked against. */
export function presentSimulation(
  period: Period,
  simulation: ProposalSimulation,
): Static<typeof SimulationModel>['data'] {
  const { spf, dmarc } = simulation
  const spfSource = (s: NonNullable<typeof spf>['sources'][number]) =>
    snakeCaseKeys({ ...s, currentSpfAlignedShare: percentOf(s.currentSpfAlignedShare) })
  const data = {
    period,
    ...(spf === undefined
      ? {}
      : {
          spf: {
            ...(snakeCaseKeys({ ...spf, sources: [], newlyFailing: [], newlyPassing: [] }) as object),
            sources: spf.sources.map(spfSource),
            newly_failing: spf.newlyFailing.map(spfSource),
            newly_passing: spf.newlyPassing.map(spfSource),
          },
        }),
    ...(dmarc === undefined
      ? {}
      : {
          dmarc: snakeCaseKeys({
            ...dmarc,
            sources: dmarc.sources.slice(0, MAX_LISTED_DMARC_SOURCES),
            totalSources: dmarc.sources.length,
          }),
        }),
  }
  return data as Static<typeof SimulationModel>['data']
}
