import type { AggregateMetadata, PolicyPublished } from '../../domain/reports/aggregate-types.ts'

/** A one-day aggregate report's metadata for storage tests; override what a test cares about. */
export function reportMetadata(
  input: { reportId: string; begin: number; domain: string },
  overrides: Partial<Omit<AggregateMetadata, 'policy'>> & { policy?: Partial<PolicyPublished> } = {},
): AggregateMetadata {
  const { policy, ...rest } = overrides
  return {
    variant: 'rfc7489',
    version: null,
    orgName: 'R',
    email: null,
    extraContactInfo: null,
    reportId: input.reportId,
    begin: input.begin,
    end: input.begin + 86_399,
    errors: [],
    generator: null,
    ...rest,
    policy: {
      domain: input.domain,
      adkim: null,
      aspf: null,
      p: 'none',
      sp: null,
      np: null,
      pct: null,
      fo: null,
      testing: null,
      discoveryMethod: null,
      ...policy,
    },
  }
}
