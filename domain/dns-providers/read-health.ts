// Reads through a DNS provider that fail (issue #19, part 2): the current record read before a
// write and the read-back after it. A provider that cannot be read cannot be written safely, and a
// credential or permission problem does not heal itself, so each failure is recorded on the
// connection (and each success clears it): the `dns_provider_read_failing` alert reads it
// (domain/alerts/rules/operations.ts, docs/alerts.md). The failing use case leaves the previous
// record in place and its job retries.

import type { DnsProvider, ProviderResult } from './ports.ts'
import type { Connection, OpenProvider } from './use-cases.ts'

/** Scoped by account (infrastructure/repositories/pg-provider-read-health.ts). */
export interface ReadHealthStore {
  /** Records the failure (and asks for the account's operations alerts to be evaluated). */
  readFailed(accountId: string, connectionId: string, error: string, at: Date): Promise<void>
  /** Clears a recorded failure; nothing when none was recorded. */
  readSucceeded(accountId: string, connectionId: string): Promise<void>
}

/** The provider of a connection, its reads reported to `health`. */
function watched(provider: DnsProvider, connection: Connection, health: ReadHealthStore, now: () => Date) {
  const { accountId, id } = connection
  const report = async <T>(read: ProviderResult<T>) => {
    if (read.ok) await health.readSucceeded(accountId, id)
    else await health.readFailed(accountId, id, `${read.failure.kind}: ${read.failure.message}`, now())
    return read
  }
  return {
    kind: provider.kind,
    authenticate: () => provider.authenticate(),
    // Finding the zone that holds a domain is the first read of every write.
    listZones: async () => report(await provider.listZones()),
    readRecords: async (zone, filter) => report(await provider.readRecords(zone, filter)),
    upsertRecordSet: (zone, set) => provider.upsertRecordSet(zone, set),
    deleteRecordSet: (zone, name, type) => provider.deleteRecordSet(zone, name, type),
  } satisfies DnsProvider
}

/**
 * `open` with every record read of the opened provider reported to `health`; a connection whose
 * credentials cannot even be opened counts as a failed read.
 */
export function watchReads(open: OpenProvider, health: ReadHealthStore, now: () => Date): OpenProvider {
  return async (connection) => {
    const opened = await open(connection)
    if (!opened.ok) {
      const { kind, message } = opened.failure
      await health.readFailed(connection.accountId, connection.id, `${kind}: ${message}`, now())
      return opened
    }
    return { ok: true, value: watched(opened.value, connection, health, now) }
  }
}
