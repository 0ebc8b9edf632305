import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { PublishDeps } from '../../domain/dns-providers/publish.ts'
import type { ProgressionDeps } from '../../domain/policy/ports.ts'
import { providerDmarc } from '../../domain/policy/provider-record.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { pgPolicyStore } from '../../infrastructure/repositories/pg-policy-store.ts'
import {
  dailyVolumes,
  listOverrides,
  sourceStats,
} from '../../infrastructure/repositories/pg-source-stats.ts'

// Use-case deps built from the database, shared by the API routes and the jobs (docs/architecture.md,
// "Where things go"): neither imports the other.

/** The progression engine's reads and writes, for the daily job and the API alike. */
export function progressionDeps(deps: {
  database: Database
  dns: DnsResolver
  now: () => Date
  /** SPF_ZONE: the hosted DMARC records live under it. */
  zone: string
  /**
   * The DNS provider deps (src/wiring/dns-providers.ts): a domain whose zone is on a connected
   * provider has its `_dmarc` TXT changed through it (docs/policy-progression.md).
   */
  providers?: PublishDeps
}): ProgressionDeps {
  const db = deps.database.db
  return {
    store: pgPolicyStore(db, { zone: deps.zone }),
    figures: {
      stats: (scope, period) => sourceStats(db, { ...scope, ...period }),
      overrides: (scope) => listOverrides(db, scope),
      daily: (scope, period) => dailyVolumes(db, { ...scope, ...period }),
    },
    dns: deps.dns,
    now: deps.now,
    ...(deps.providers === undefined ? {} : { zoneDmarc: providerDmarc(deps.providers) }),
  }
}
