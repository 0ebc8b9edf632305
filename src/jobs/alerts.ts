import type { PgBoss } from 'pg-boss'
import type { Database } from '../../infrastructure/db/database.ts'
import type { Logger } from '../../infrastructure/logging/json-logger.ts'

// Alert evaluation jobs (issue #6): filled in next.

export interface AlertJobDeps {
  database: Database
  logger: Logger
  now: () => Date
}

export async function registerAlertJobs(_boss: PgBoss, _deps: AlertJobDeps): Promise<void> {}
