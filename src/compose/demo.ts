import type { PgBoss } from 'pg-boss'
import type { DemoDeps } from '../../domain/demo/demo-use-cases.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { demoMessage } from '../../infrastructure/mail/demo-mail.ts'
import { domainJobKey, evaluateNow } from '../../infrastructure/queue/alert-triggers.ts'
import {
  CHECK_DOMAIN,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  send,
} from '../../infrastructure/queue/catalogue.ts'
import {
  pendingAccountMessages,
  pendingDemoMessages,
} from '../../infrastructure/repositories/pg-demo-store.ts'
import { onTransaction } from '../../infrastructure/repositories/pg-ingest-message-store.ts'
import type { Config } from '../config.ts'
import { intake } from './ingest.ts'
import { demoStore, stores } from './stores.ts'

// The demo command's deps (`bun run cli demo`, docs/demo.md), built from the command's database.

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
    async settle(accountId) {
      // No worker when the CLI opened DATA_DIR itself: nothing would change while it waited.
      if (database.kind === 'pglite') return
      const deadline = now().getTime() + DIGEST_WAIT_MS
      while ((await pendingAccountMessages(database.db, accountId)) > 0 && now().getTime() <= deadline)
        await Bun.sleep(500)
    },
    async followUp(accountId, name, messageIds) {
      // Sent on the command's own database connection: through a running service's socket, one
      // client at a time holds the embedded database, and pg-boss's pool would be a second one.
      const db = onTransaction(database.db as unknown as Parameters<typeof onTransaction>[0])
      await send(boss, CHECK_DOMAIN, { accountId, name }, { singletonKey: `${accountId}:${name}`, db })
      // The CLI opened DATA_DIR itself: no service, so no worker to wait for (the jobs wait for it).
      const digested = database.kind === 'pglite' ? false : await waitForDigest(database, messageIds, now)
      const domainId = await s.reports.domainId(accountId, name)
      if (domainId === null) throw new Error(`the demo domain ${name} vanished while it was being installed`)
      const ref = { accountId, domainId }
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
    if ((await pendingDemoMessages(database.db, ids)) === 0) return true
    if (now().getTime() > deadline) return false
    await Bun.sleep(500)
  }
}
