import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { PublishDeps } from '../../domain/dns-providers/publish.ts'
import type { ProgressionDeps } from '../../domain/policy/ports.ts'
import { providerDmarc } from '../../domain/policy/provider-record.ts'
import type { ProcessStores } from './stores.ts'

/**
 * The progression engine's reads and writes, for the daily job and the API alike. With `providers`,
 * a domain whose zone is on a connected DNS provider has its `_dmarc` TXT changed through it
 * (docs/policy-progression.md, "Through a connected DNS provider").
 */
export function progressionDeps(
  s: Pick<ProcessStores, 'policy' | 'figures'>,
  runtime: { dns: DnsResolver; now: () => Date },
  providers?: PublishDeps,
): ProgressionDeps {
  return {
    store: s.policy,
    figures: s.figures,
    dns: runtime.dns,
    now: runtime.now,
    ...(providers === undefined ? {} : { zoneDmarc: providerDmarc(providers) }),
  }
}
