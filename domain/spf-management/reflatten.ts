// The scheduled re-plan: a flattened record is a snapshot of the providers' networks, and a record
// that was within the lookup budget may not be once a provider adds a nested include. Each managed
// record not planned for a while is planned again from its configuration; only a different result
// is a new version (by 'system'), otherwise the planning time moves on.

import type { DnsResolver } from '../dns/ports.ts'
import { commitChange, planRecords } from './managed-change.ts'
import type { HostedRecords } from './managed-record.ts'
import type { SpfStore } from './ports.ts'
import { readPublished } from './published-record.ts'

export interface ReflattenDeps {
  store: Pick<SpfStore, 'listManagedForReplan' | 'saveChange' | 'touchPlanned'>
  dns: DnsResolver
  now: () => Date
  zone: string
}

export const REFLATTEN_REASON = 're-flattened: provider networks changed'

const sameRecords = (a: HostedRecords, b: HostedRecords) =>
  a.records.length === b.records.length &&
  a.records.every((r, i) => r.name === b.records[i]!.name && r.text === b.records[i]!.text)

/**
 * Re-plans up to `limit` managed records planned more than `olderThanHours` ago, oldest first;
 * returns how many it looked at (each one's planning time moves, so calling again until it returns
 * less than `limit` drains the backlog). A record that cannot be planned now (a DNS failure, a
 * provider that broke its record, the budget exceeded with flattening off) keeps being served as
 * it is: the last good records beat none.
 */
export async function reflattenDue(
  deps: ReflattenDeps,
  input: { olderThanHours: number; limit: number },
): Promise<number> {
  const now = deps.now()
  const due = await deps.store.listManagedForReplan(
    new Date(now.getTime() - input.olderThanHours * 3_600_000),
    input.limit,
  )
  for (const item of due) {
    const published = await readPublished(deps.dns, item.domainName)
    const planned =
      published.status === 'temperror'
        ? null
        : await planRecords(deps, {
            domain: item.domainName,
            label: item.label,
            config: item.config,
            published,
          })
    if (planned === null || !planned.ok || sameRecords(planned.value.records, item.records)) {
      await deps.store.touchPlanned(item.accountId, item.domainId, now)
      continue
    }
    // A concurrent user change wins: its own planning is newer than this one.
    await commitChange(
      { ...deps, dnsWrites: async () => ({ ok: true, value: null }) },
      {
        accountId: item.accountId,
        domainId: item.domainId,
        current: item,
        label: item.label,
        config: item.config,
        records: planned.value.records,
        action: 'spf.reflatten',
        reason: REFLATTEN_REASON,
        actor: 'system',
        event: null,
        budget: false,
      },
    )
  }
  return due.length
}
