// `POST /domains/{domain}/simulate` (issue #5): replays the period's per-IP figures against a
// proposed SPF record, a proposed DMARC record, or both (docs/simulation.md). The request's field
// names are used in validation errors: `spf_record`, `dmarc_record`.

import type { DnsResolver } from '../dns/ports.ts'
import type { Period } from '../reports/period.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import {
  type DmarcPolicySimulation,
  type SpfSimulation,
  simulateDmarcPolicy,
  simulateSpf,
} from './simulate.ts'
import type { SourceStats } from './source-stats.ts'

/** Sources replayed through check_host() at most: each costs DNS queries (cached per include). */
export const MAX_SIMULATED_SOURCES = 500

export interface SimulateProposalDeps {
  stats: (period: Period) => Promise<SourceStats[]>
  dns: DnsResolver
  now: () => Date
}

export interface SimulateProposalInput {
  domain: string
  period: Period
  spfRecord?: string
  dmarcRecord?: string
  maxSources?: number
}

export interface ProposalSimulation {
  spf?: SpfSimulation
  dmarc?: DmarcPolicySimulation
}

/** A failure of a simulation's `record` field, renamed to the request field it came from. */
function renamed<T>(result: Result<T>, field: string): Result<T> {
  if (result.ok || result.failure.code !== 'validation_failed') return result
  const { errors, message } = result.failure
  const { record, ...rest } = errors
  return fail({
    code: 'validation_failed',
    message,
    errors: record === undefined ? errors : { ...rest, [field]: record },
  })
}

export async function simulateProposal(
  deps: SimulateProposalDeps,
  input: SimulateProposalInput,
): Promise<Result<ProposalSimulation>> {
  if (input.spfRecord === undefined && input.dmarcRecord === undefined) {
    return invalid('spf_record', 'Give spf_record, dmarc_record or both.')
  }
  // The DMARC proposal is checked before the figures are read and the SPF replay's DNS work starts
  // (simulateSpf checks its own record before any query): a typo answers at once.
  const dmarc =
    input.dmarcRecord === undefined
      ? undefined
      : { proposedRecord: input.dmarcRecord, sources: [] as SourceStats[] }
  if (dmarc !== undefined) {
    const checked = renamed(simulateDmarcPolicy(dmarc), 'dmarc_record')
    if (!checked.ok) return fail(checked.failure)
  }
  const sources = await deps.stats(input.period)
  const out: ProposalSimulation = {}
  if (input.spfRecord !== undefined) {
    const spf = renamed(
      await simulateSpf(
        { dns: deps.dns, now: deps.now },
        {
          domain: input.domain,
          proposedRecord: input.spfRecord,
          sources,
          maxSources: input.maxSources ?? MAX_SIMULATED_SOURCES,
        },
      ),
      'spf_record',
    )
    if (!spf.ok) return fail(spf.failure)
    out.spf = spf.value
  }
  if (dmarc !== undefined) {
    const simulated = renamed(simulateDmarcPolicy({ ...dmarc, sources }), 'dmarc_record')
    if (!simulated.ok) return fail(simulated.failure)
    out.dmarc = simulated.value
  }
  return ok(out)
}
