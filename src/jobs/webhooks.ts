import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { Logger } from '../../infrastructure/logging/json-logger.ts'

// The outbox relay and webhook delivery jobs (issue #6): filled in next.

export interface WebhookJobDeps {
  database: Database
  logger: Logger
  now: () => Date
  secrets: SecretBox
  dns: DnsResolver
  allowPrivate: boolean
  perHour: number
}

export async function registerWebhookJobs(_boss: PgBoss, _deps: WebhookJobDeps): Promise<void> {}
