import { discoverDmarc } from '../dmarc/discovery.ts'
import type { DnsResolver } from '../dns/ports.ts'
import { resolveSpfTree } from '../spf/include-tree.ts'
import type { SourceDeps } from './list-sources.ts'
import type { SourceFigures } from './ports.ts'
import type { IntelligenceDeps } from './source-intelligence.ts'

/** One domain of one account; the periods come with each read. */
export interface DomainScope {
  accountId: string
  domainId: number
}

// What the sources use cases read for one domain, built the same way for the API routes
// (src/routes/sources.ts) and the dashboard's domain pages.

export function sourceDepsFor(figures: SourceFigures, dns: DnsResolver, scope: DomainScope): SourceDeps {
  return {
    stats: (period) => figures.stats(scope, period),
    overrides: () => figures.overrides(scope),
    spfTree: (domain) => resolveSpfTree({ dns }, domain),
  }
}

/** The sources deps plus daily volumes and the published DMARC policy (source intelligence). */
export function intelligenceDepsFor(
  figures: SourceFigures,
  dns: DnsResolver,
  scope: DomainScope,
): IntelligenceDeps {
  return {
    ...sourceDepsFor(figures, dns, scope),
    daily: (window) => figures.daily(scope, window),
    async dmarcPolicy(domain) {
      const found = await discoverDmarc({ dns }, domain)
      return {
        policy: found.appliedPolicy?.policy ?? 'missing',
        pct: found.appliedPolicy === null ? null : (found.record?.pct ?? null),
      }
    },
  }
}
