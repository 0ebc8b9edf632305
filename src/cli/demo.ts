import { and, count, eq, inArray } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import { type DemoDeps, installDemo, removeDemo } from '../../domain/demo/demo-use-cases.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { domains } from '../../infrastructure/db/schema/domains.ts'
import { ingestMessages } from '../../infrastructure/db/schema/reports.ts'
import { demoMessage } from '../../infrastructure/mail/demo-mail.ts'
import { domainJobKey, evaluateNow } from '../../infrastructure/queue/alert-triggers.ts'
import {
  CHECK_DOMAIN,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  send,
} from '../../infrastructure/queue/catalogue.ts'
import { onTransaction } from '../../infrastructure/repositories/pg-ingest-message-store.ts'
import { demoStore } from '../compose/stores.ts'
import { intake, stores } from '../compose.ts'
import type { Config } from '../config.ts'

// `bun run cli demo --email E [--remove]` (docs/demo.md).

/** How long the command waits for a running worker to digest the reports. */
const DIGEST_WAIT_MS = 45_000
/** Without a worker (the service not started yet), the alert rules run this long after it starts. */
const ALERTS_AFTER_SECONDS = 60

export function demoDeps(input: {
  config: Config
  database: Database
  boss: PgBoss
  now: () => Date
}): DemoDeps {
  const { config, database, boss, now } = input
  const s = stores(database)
  return {
    async accountIdByEmail(email) {
      return (await s.accounts.findMembershipByEmail(email))?.accountId ?? null
    },
    reportAddress: async (accountId) => `${await s.accounts.ingestKeyOf(accountId)}@${config.ingestDomain}`,
    demo: demoStore(database),
    pack: demoMessage,
    accept: intake({ config, database, boss, now }).accept,
    async followUp(accountId, name, messageIds) {
      // Sent on the command's own database connection: through a running service's socket, one
      // client at a time holds the embedded database, and pg-boss's pool would be a second one.
      const db = onTransaction(database.db as unknown as Parameters<typeof onTransaction>[0])
      await send(boss, CHECK_DOMAIN, { accountId, name }, { singletonKey: `${accountId}:${name}`, db })
      // The CLI opened DATA_DIR itself: no service, so no worker to wait for (the jobs wait for it).
      const digested = database.kind === 'pglite' ? false : await waitForDigest(database, messageIds, now)
      const [row] = await database.db
        .select({ id: domains.id })
        .from(domains)
        .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
      if (row === undefined) throw new Error(`the demo domain ${name} vanished while it was being installed`)
      const ref = { accountId, domainId: row.id }
      const singletonKey = domainJobKey(ref)
      // Digested: at once, ahead of a debounced evaluation the reports queued for the next slot
      // (infrastructure/queue/alert-triggers.ts); otherwise once a worker had time to digest them.
      for (const queue of [EVALUATE_POSTURE_ALERTS, EVALUATE_REPORT_ALERTS]) {
        if (digested) await evaluateNow(boss, queue, ref, singletonKey)
        else await send(boss, queue, ref, { singletonKey, startAfter: ALERTS_AFTER_SECONDS })
      }
      return digested
    },
    now,
  }
}

async function waitForDigest(database: Database, ids: string[], now: () => Date): Promise<boolean> {
  const deadline = now().getTime() + DIGEST_WAIT_MS
  while (true) {
    const [row] = await database.db
      .select({ pending: count() })
      .from(ingestMessages)
      .where(and(inArray(ingestMessages.id, ids), eq(ingestMessages.status, 'pending')))
    if ((row?.pending ?? 0) === 0) return true
    if (now().getTime() > deadline) return false
    await Bun.sleep(500)
  }
}

export async function demoCommand(deps: DemoDeps, input: { email: string; remove: boolean }) {
  if (input.remove) return removeDemo(deps, input)
  return installDemo(deps, input)
}
