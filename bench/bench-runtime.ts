// What the in-process benches share: a fresh database on TEST_DATABASE_URL, the queue, the process
// runtime the composition root builds from (as src/main.ts has it, with a silent logger), its stores,
// and one account to put reports in. Each bench adds its own domains and reports.
import { createAccount } from '../domain/accounts/use-cases.ts'
import { jsonLogger } from '../infrastructure/logging/json-logger.ts'
import { createQueues } from '../infrastructure/queue/catalogue.ts'
import { startBoss } from '../infrastructure/queue/pg-boss.ts'
import { resolvers } from '../src/compose/dns.ts'
import { reportProcessBytes } from '../src/compose/report-processes.ts'
import { openSecretBox, stores, systemRandom } from '../src/compose.ts'
import { loadConfig } from '../src/config.ts'
import { createTestDatabase } from '../tests/support/test-db.ts'
import { serviceEnv } from './service-env.ts'

export const BENCH_INGEST_DOMAIN = 'in.bench.test'

export async function benchRuntime(env: Record<string, string> = {}) {
  const db = await createTestDatabase()
  const database = db.database
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    INGEST_DOMAIN: BENCH_INGEST_DOMAIN,
    SECRET_KEY: '11'.repeat(32),
    ...serviceEnv(),
    ...env,
  })
  const now = () => new Date()
  const boss = await startBoss(database, { background: false })
  await createQueues(boss)
  const runtime = {
    config,
    database,
    logger: jsonLogger('silent'),
    now,
    random: systemRandom,
    boss,
    secrets: await openSecretBox(config),
    ...resolvers(config, now),
    // Large messages go to report processes of their own, as the service has it (src/main.ts).
    reportProcessBytes: reportProcessBytes(config, database),
  }
  const s = stores(database, boss)
  return { db, database, config, now, boss, runtime, s }
}

/** An account (no password) and its report address on the bench's ingest domain. */
export async function benchAccount(s: ReturnType<typeof stores>, email: string) {
  const account = await createAccount(
    { accounts: s.accounts, random: systemRandom, hashPassword: async () => 'x' },
    { email },
  )
  if (!account.ok) throw new Error('account')
  return { ...account.value, recipient: `${account.value.ingestKey}@${BENCH_INGEST_DOMAIN}` }
}
