import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { Logger } from '../../infrastructure/logging/json-logger.ts'

// Domain imports from DNS providers (issue #7): filled in next.

export interface DnsProviderJobDeps {
  database: Database
  logger: Logger
  now: () => Date
  secrets: SecretBox
  dns: DnsResolver
  allowPrivate: boolean
}

export async function registerDnsProviderJobs(_boss: PgBoss, _deps: DnsProviderJobDeps): Promise<void> {}
