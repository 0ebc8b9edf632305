import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ProgressionDeps } from '../../domain/policy/ports.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { pgPolicyStore } from '../../infrastructure/repositories/pg-policy-store.ts'
import { reportFigures } from '../compose/stores.ts'

// Use-case deps built from the database, shared by the API routes and the jobs (docs/architecture.md,
// "Where things go"): neither imports the other.

/** The progression engine's reads and writes, for the daily job and the API alike. */
export function progressionDeps(deps: {
  database: Database
  dns: DnsResolver
  now: () => Date
  /** SPF_ZONE: the hosted DMARC records live under it. */
  zone: string
}): ProgressionDeps {
  const db = deps.database.db
  return {
    store: pgPolicyStore(db, { zone: deps.zone }),
    figures: reportFigures(db),
    dns: deps.dns,
    now: deps.now,
  }
}
