import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ProgressionDeps } from '../../domain/policy/ports.ts'
import type { ProcessStores } from './stores.ts'

/** The progression engine's reads and writes, for the daily job and the API alike. */
export function progressionDeps(
  s: Pick<ProcessStores, 'policy' | 'figures'>,
  runtime: { dns: DnsResolver; now: () => Date },
): ProgressionDeps {
  return { store: s.policy, figures: s.figures, dns: runtime.dns, now: runtime.now }
}
