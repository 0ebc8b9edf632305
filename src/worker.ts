import type { PgBoss } from 'pg-boss'
import { createQueues } from '../infrastructure/queue/catalogue.ts'
import { registerJobs } from '../infrastructure/queue/handlers.ts'
import { pgDomainVerifications } from '../infrastructure/repositories/pg-domain-verification.ts'
import { checkDeps, ingestJobDeps, intake, type Runtime, stores } from './compose.ts'
import { alertJobs } from './jobs/alerts.ts'
import { dnsProviderJobs } from './jobs/dns-providers.ts'
import { ingestJobs } from './jobs/ingest.ts'
import { mailboxJobs } from './jobs/mailboxes.ts'
import { maintenanceJobs } from './jobs/maintenance.ts'
import { policyJobs } from './jobs/policy.ts'
import { postureJobs } from './jobs/posture.ts'
import { spfJobs } from './jobs/spf.ts'
import { webhookJobDeps, webhookJobs } from './jobs/webhooks.ts'

/**
 * Registers every queue, schedule and handler this process works on: one list of handlers, one per
 * queue of the catalogue (infrastructure/queue/catalogue.ts; mailbox polling only with mailboxes).
 */
export async function startWorkers(boss: PgBoss, runtime: Runtime): Promise<void> {
  await createQueues(boss)
  const s = stores(runtime.database, boss)
  const { accept, messages } = intake(runtime)
  const { config } = runtime
  const webhooks = webhookJobs(boss, webhookJobDeps(runtime))
  const workers = await registerJobs(boss, [
    ...maintenanceJobs({ db: runtime.database.db, now: runtime.now }),
    ...ingestJobs(ingestJobDeps({ ...runtime, boss }, messages)),
    ...mailboxJobs(
      { accept, logger: runtime.logger },
      {
        urls: config.imapMailboxes,
        archiveFolder: config.imapArchiveFolder,
        rejectedFolder: config.imapRejectedFolder,
        maxMessageBytes: config.ingestMaxMessageBytes,
      },
    ),
    ...alertJobs(boss, {
      database: runtime.database,
      logger: runtime.logger,
      now: runtime.now,
      dns: runtime.dns,
    }),
    ...webhooks.handlers,
    ...spfJobs({
      db: runtime.database.db,
      dns: runtime.dns,
      now: runtime.now,
      logger: runtime.logger,
      zone: config.spf.zone,
      reflattenHours: config.spf.reflattenHours,
    }),
    ...dnsProviderJobs(boss, {
      database: runtime.database,
      verificationDns: runtime.verificationDns,
      dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
      random: runtime.random,
      logger: runtime.logger,
      now: runtime.now,
      secrets: runtime.secrets,
      dns: runtime.dns,
      allowPrivate: config.webhookAllowPrivate,
    }),
    ...policyJobs(boss, {
      database: runtime.database,
      dns: runtime.dns,
      logger: runtime.logger,
      now: runtime.now,
      zone: config.spf.zone,
    }),
    ...postureJobs(boss, {
      // This process's queue, so a verification re-queues the reports that waited for it at once.
      ...checkDeps({ ...runtime, boss }, s),
      verificationDns: runtime.verificationDns,
      requeueWaiting: () => pgDomainVerifications(runtime.database.db, boss).requeueWaiting(),
      now: runtime.now,
      logger: runtime.logger,
    }),
  ])
  webhooks.startRelay(workers)
}
