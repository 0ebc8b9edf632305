import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { Db } from '../../infrastructure/db/database.ts'
import { reflattenManagedRecords } from '../../infrastructure/repositories/pg-spf-store.ts'

export const REFLATTEN_SPF = 'spf.reflatten'
const BATCH = 50

/**
 * Flattened managed records hold the providers' networks as they were when planned; providers
 * change them. Hourly, every record planned more than SPF_REFLATTEN_HOURS ago is planned again,
 * and served anew only when the result changed (a new version, actor `system`).
 */
export async function registerSpfJobs(
  boss: PgBoss,
  deps: { db: Db; dns: DnsResolver; now: () => Date; logger: Logger; zone: string; reflattenHours: number },
): Promise<void> {
  await boss.schedule(REFLATTEN_SPF, '23 * * * *')
  await boss.work(REFLATTEN_SPF, async () => {
    let total = 0
    while (true) {
      const seen = await reflattenManagedRecords(
        { db: deps.db, dns: deps.dns, now: deps.now, zone: deps.zone },
        { olderThanHours: deps.reflattenHours, limit: BATCH },
      )
      total += seen
      if (seen < BATCH) break
    }
    if (total > 0) deps.logger.info('managed SPF records re-planned', { count: total })
  })
}
