import { and, eq, isNotNull } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import type { ReadHealthStore } from '../../domain/dns-providers/read-health.ts'
import type { Db } from '../db/database.ts'
import { dnsProviderConnections } from '../db/schema/dns-providers.ts'
import { enqueueOperationsAlerts } from '../queue/alert-triggers.ts'

// Failed reads through a DNS provider connection (domain/dns-providers/read-health.ts), on the
// connection's row. A failure asks for the account's operations alerts at once (debounced like a
// failure report's, infrastructure/queue/alert-triggers.ts); the scheduler stays the safety net.

const MAX_ERROR = 500

export function pgProviderReadHealth(db: Db, boss: PgBoss | null): ReadHealthStore {
  const row = (accountId: string, id: string) =>
    and(eq(dnsProviderConnections.accountId, accountId), eq(dnsProviderConnections.id, id))
  return {
    async readFailed(accountId, connectionId, error, at) {
      const updated = await db
        .update(dnsProviderConnections)
        .set({ readFailedAt: at, readError: error.slice(0, MAX_ERROR) })
        .where(row(accountId, connectionId))
        .returning({ id: dnsProviderConnections.id })
      if (updated.length > 0 && boss !== null) await enqueueOperationsAlerts(boss, accountId)
    },

    async readSucceeded(accountId, connectionId) {
      await db
        .update(dnsProviderConnections)
        .set({ readFailedAt: null, readError: null })
        .where(and(row(accountId, connectionId), isNotNull(dnsProviderConnections.readFailedAt)))
    },
  }
}
