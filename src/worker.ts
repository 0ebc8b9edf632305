import type { PgBoss } from 'pg-boss'
import { createQueues } from '../infrastructure/queue/catalogue.ts'
import { registerJobs } from '../infrastructure/queue/handlers.ts'
import { alertEvaluationDeps } from './compose/alerts.ts'
import { providerDeps } from './compose/dns-providers.ts'
import { ingestJobDeps, intake } from './compose/ingest.ts'
import { housekeeping } from './compose/maintenance.ts'
import { notificationMailDeps } from './compose/notification-mail.ts'
import { chatDeliveryDeps } from './compose/notifications.ts'
import { progressionDeps } from './compose/policy.ts'
import { checkDeps } from './compose/posture.ts'
import { reportRulesProcess } from './compose/report-processes.ts'
import { reflattenStep, spfRetryStep } from './compose/spf.ts'
import { processStores } from './compose/stores.ts'
import { webhookJobDeps } from './compose/webhooks.ts'
import type { Runtime } from './compose.ts'
import { alertJobs } from './jobs/alerts.ts'
import { dnsProviderJobs } from './jobs/dns-providers.ts'
import { ingestJobs } from './jobs/ingest.ts'
import { mailboxJobs } from './jobs/mailboxes.ts'
import { maintenanceJobs } from './jobs/maintenance.ts'
import { notificationMailJobs } from './jobs/notification-mail.ts'
import { notificationJobs } from './jobs/notifications.ts'
import { policyJobs } from './jobs/policy.ts'
import { postureJobs } from './jobs/posture.ts'
import { spfJobs } from './jobs/spf.ts'
import { webhookJobs } from './jobs/webhooks.ts'

/**
 * Registers every queue, schedule and handler this process works on: one list of handlers, one per
 * queue of the catalogue (infrastructure/queue/catalogue.ts; mailbox polling only with mailboxes).
 */
export async function startWorkers(boss: PgBoss, runtime: Runtime): Promise<void> {
  await createQueues(boss)
  // This process's queue: stores that enqueue (imports, verifications) use it.
  const s = processStores({ ...runtime, boss })
  // This process's queue: an import's next step is enqueued with its row.
  const providers = providerDeps({ ...runtime, boss }, s.counter)
  const { accept, messages } = intake(runtime)
  const { config } = runtime
  const webhooks = webhookJobs(boss, webhookJobDeps(runtime, boss))
  const workers = await registerJobs(boss, [
    ...maintenanceJobs({ housekeeping: housekeeping(runtime.database), now: runtime.now }),
    ...ingestJobs(ingestJobDeps({ ...runtime, boss }, { messages, forensicTls: s.forensicTls })),
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
      ...alertEvaluationDeps(s, runtime),
      logger: runtime.logger,
      // A day of many sources is evaluated by a report process (ROLE=all on PostgreSQL).
      ownProcess: reportRulesProcess(runtime),
    }),
    ...webhooks.handlers,
    ...notificationMailJobs(notificationMailDeps(runtime, boss, s, s.notificationSettings)),
    // Slack and Teams messages of alert events (docs/notifications.md).
    ...notificationJobs(chatDeliveryDeps(runtime, s.notificationSettings, boss)),
    ...spfJobs({
      reflatten: reflattenStep(s, runtime),
      logger: runtime.logger,
      reflattenHours: config.spf.reflattenHours,
      retryWrite: spfRetryStep(s, runtime, providers),
    }),
    ...dnsProviderJobs(boss, {
      providers,
      verifications: s.verifications,
      random: runtime.random,
      logger: runtime.logger,
      now: runtime.now,
    }),
    // Domains whose `_dmarc` TXT is on a connected DNS provider progress through it (docs/policy-progression.md).
    ...policyJobs(boss, { progression: progressionDeps(s, runtime, providers), logger: runtime.logger }),
    ...postureJobs(boss, {
      // This process's queue, so a verification re-queues the reports that waited for it at once.
      ...checkDeps(runtime, s),
      verificationDns: runtime.verificationDns,
      requeueWaiting: () => s.verifications.requeueWaiting(),
      now: runtime.now,
      logger: runtime.logger,
    }),
  ])
  webhooks.startRelay(workers)
}
