import type { PgBoss } from 'pg-boss'
import type { Runtime } from './compose.ts'
import { registerMaintenance } from './jobs/maintenance.ts'

/** Registers every queue, schedule and handler this process works on. */
export async function startWorkers(boss: PgBoss, runtime: Runtime): Promise<void> {
  await registerMaintenance(boss, { db: runtime.database.db, now: runtime.now })
}
