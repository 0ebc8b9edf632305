import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { Logger } from '../../infrastructure/logging/json-logger.ts'

// DMARC policy progression (issue #6): filled in next.

export interface PolicyJobDeps {
  database: Database
  dns: DnsResolver
  logger: Logger
  now: () => Date
  zone: string
}

export async function registerPolicyJobs(_boss: PgBoss, _deps: PolicyJobDeps): Promise<void> {}
