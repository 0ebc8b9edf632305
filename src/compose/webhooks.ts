import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { sendWebhook } from '../../infrastructure/http/webhook-sender.ts'
import { webhookAttempts, webhookDeferrals } from '../../infrastructure/metrics/instruments.ts'
import { pgRateLimitCounter } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { pgWebhookRelay } from '../../infrastructure/repositories/pg-webhook-relay.ts'
import { secretContext } from '../../infrastructure/repositories/pg-webhook-store.ts'
import type { Config } from '../config.ts'
import type { WebhookJobDeps } from '../jobs/webhooks.ts'

/** The delivery job's deps as a process builds them from its runtime (the worker, and tests that deliver). */
export function webhookJobDeps(
  runtime: {
    database: Database
    logger: Logger
    now: () => Date
    secrets: SecretBox
    dns: DnsResolver
    config: Pick<Config, 'webhookAllowPrivate' | 'rateLimits' | 'mail'>
  },
  boss: PgBoss,
): WebhookJobDeps {
  const { now } = runtime
  const sender = { dns: runtime.dns, allowPrivate: runtime.config.webhookAllowPrivate, now }
  return {
    relay: pgWebhookRelay(runtime.database.db, boss, {
      alertMailIntervalSeconds: runtime.config.mail.alertIntervalSeconds,
    }),
    counter: pgRateLimitCounter(runtime.database.db),
    send: (input) => sendWebhook(sender, input),
    openSecret: (sealed, accountId) => runtime.secrets.open(sealed, secretContext(accountId)),
    metrics: {
      attempted: (verdict) => webhookAttempts.inc({ verdict }),
      deferred: () => webhookDeferrals.inc(),
    },
    logger: runtime.logger,
    now,
    perHour: runtime.config.rateLimits.webhooksPerHour,
  }
}
