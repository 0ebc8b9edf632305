import type { PgBoss } from 'pg-boss'
import { checkDeps, intake, type Runtime, stores } from './compose.ts'
import { registerAlertJobs } from './jobs/alerts.ts'
import { ByteBudget } from './jobs/byte-budget.ts'
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
  await registerIngestJobs(boss, {
    database: runtime.database,
    messages,
    forensicTls: s.forensicTls,
    dns: runtime.dns,
    logger: runtime.logger,
    now: runtime.now,
    limits: {
      maxDecompressedBytes: config.ingestMaxReportBytes,
      maxZipEntries: 32,
      maxCompressionRatio: 1000,
      maxParts: 1000,
    },
    redactForensic: s.forensicTls.redactsForensic,
    budget: new ByteBudget(config.ingestWorkerMaxBytes),
  })
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
    ...checkDeps(runtime, s),
    verificationDns: runtime.verificationDns,
    now: runtime.now,
    logger: runtime.logger,
  })
}
