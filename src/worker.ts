import type { PgBoss } from 'pg-boss'
import { pgDomainVerifications } from '../infrastructure/repositories/pg-domain-verification.ts'
import { checkDeps, ingestJobDeps, intake, type Runtime, stores } from './compose.ts'
import { registerAlertJobs } from './jobs/alerts.ts'
import { registerDnsProviderJobs } from './jobs/dns-providers.ts'
import { registerIngestJobs } from './jobs/ingest.ts'
import { registerMailboxPolling } from './jobs/mailboxes.ts'
import { registerMaintenance } from './jobs/maintenance.ts'
import { registerPolicyJobs } from './jobs/policy.ts'
import { registerPostureJobs } from './jobs/posture.ts'
import { createQueues } from './jobs/queues.ts'
import { registerSpfJobs } from './jobs/spf.ts'
import { registerWebhookJobs, webhookJobDeps } from './jobs/webhooks.ts'

/** Registers every queue, schedule and handler this process works on. */
export async function startWorkers(boss: PgBoss, runtime: Runtime): Promise<void> {
  await createQueues(boss)
  await registerMaintenance(boss, { db: runtime.database.db, now: runtime.now })
  const s = stores(runtime.database)
  const { accept, messages } = intake(runtime)
  const { config } = runtime
  await registerIngestJobs(boss, ingestJobDeps(runtime, messages))
  await registerMailboxPolling(
    boss,
    { accept, logger: runtime.logger },
    {
      urls: runtime.config.imapMailboxes,
      archiveFolder: runtime.config.imapArchiveFolder,
      rejectedFolder: runtime.config.imapRejectedFolder,
      maxMessageBytes: runtime.config.ingestMaxMessageBytes,
    },
  )
  await registerAlertJobs(boss, {
    database: runtime.database,
    logger: runtime.logger,
    now: runtime.now,
    dns: runtime.dns,
  })
  await registerWebhookJobs(boss, webhookJobDeps(runtime))
  await registerSpfJobs(boss, {
    db: runtime.database.db,
    dns: runtime.dns,
    now: runtime.now,
    logger: runtime.logger,
    zone: config.spf.zone,
    reflattenHours: config.spf.reflattenHours,
  })
  await registerDnsProviderJobs(boss, {
    database: runtime.database,
    verificationDns: runtime.verificationDns,
    dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
    random: runtime.random,
    logger: runtime.logger,
    now: runtime.now,
    secrets: runtime.secrets,
    dns: runtime.dns,
    allowPrivate: config.webhookAllowPrivate,
  })
  await registerPolicyJobs(boss, {
    database: runtime.database,
    dns: runtime.dns,
    logger: runtime.logger,
    now: runtime.now,
    zone: config.spf.zone,
  })
  await registerPostureJobs(boss, {
    // This process's queue, so a verification re-queues the reports that waited for it at once.
    ...checkDeps({ ...runtime, boss }, s),
    verificationDns: runtime.verificationDns,
    requeueWaiting: () => pgDomainVerifications(runtime.database.db, boss).requeueWaiting(),
    now: runtime.now,
    logger: runtime.logger,
  })
}
