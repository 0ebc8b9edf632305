import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ChatDeliveryDeps } from '../../domain/notifications/chat-delivery.ts'
import type { NotificationSettingsStore } from '../../domain/notifications/settings.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { chatSender } from '../../infrastructure/http/chat-sender.ts'
import { pgChatDeliveries } from '../../infrastructure/repositories/pg-chat-deliveries.ts'
import type { Config } from '../config.ts'

// Chat delivery deps (docs/notifications.md): built once per process, for the worker's job and for
// the API's test message.

export function chatDeliveryDeps(
  runtime: {
    database: Database
    logger: Logger
    now: () => Date
    dns: DnsResolver
    config: Pick<Config, 'webhookAllowPrivate' | 'publicUrl'>
  },
  settings: NotificationSettingsStore,
  boss: PgBoss | null,
) {
  const deliveries = pgChatDeliveries(runtime.database.db, boss)
  return {
    ledger: deliveries,
    log: deliveries,
    settings,
    post: chatSender({ dns: runtime.dns, allowPrivate: runtime.config.webhookAllowPrivate }),
    dashboardUrl: runtime.config.publicUrl,
    logger: runtime.logger,
    now: runtime.now,
  } satisfies ChatDeliveryDeps & Record<string, unknown>
}

export type ChatDeps = ReturnType<typeof chatDeliveryDeps>
