import { discoverDmarc } from '../../domain/dmarc/discovery.ts'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { SourceDeps } from '../../domain/sources/list-sources.ts'
import type { IntelligenceDeps } from '../../domain/sources/source-intelligence.ts'
import { resolveSpfTree } from '../../domain/spf/include-tree.ts'
import type { Db } from '../../infrastructure/db/database.ts'
import {
  dailyVolumes,
  listOverrides,
  sourceStats,
} from '../../infrastructure/repositories/pg-source-stats.ts'

/** One domain of one account; the periods come with each read. */
export interface DomainScope {
  accountId: string
  domainId: number
}

// What the sources use cases read for one domain, built the same way for the API routes
// (routes/sources.ts) and the dashboard's domain pages.

export function sourceDepsFor(db: Db, dns: DnsResolver, scope: DomainScope): SourceDeps {
  return {
    stats: (period) => sourceStats(db, { ...scope, ...period }),
    overrides: () => listOverrides(db, scope),
    spfTree: (domain) => resolveSpfTree({ dns }, domain),
  }
}

/** The sources deps plus daily volumes and the published DMARC policy (source intelligence). */
export function intelligenceDepsFor(db: Db, dns: DnsResolver, scope: DomainScope): IntelligenceDeps {
  return {
    ...sourceDepsFor(db, dns, scope),
    daily: (window) => dailyVolumes(db, { ...scope, ...window }),
    async dmarcPolicy(domain) {
      const found = await discoverDmarc({ dns }, domain)
      return {
        policy: found.appliedPolicy?.policy ?? 'missing',
        pct: found.appliedPolicy === null ? null : (found.record?.pct ?? null),
      }
    },
  }
}
