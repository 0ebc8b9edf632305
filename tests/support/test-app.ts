import { createAccount, createToken } from '../../domain/accounts/use-cases.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { jsonLogger } from '../../infrastructure/logging/json-logger.ts'
import { createQueues } from '../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../infrastructure/queue/pg-boss.ts'
import { resolvers } from '../../src/compose/dns.ts'
import {
  type App,
  buildApp,
  LISTEN_OPTIONS,
  openSecretBox,
  type Runtime,
  stores,
  systemRandom,
} from '../../src/compose.ts'
import { type Config, loadConfig } from '../../src/config.ts'
import { createTestDatabase, type TestDatabase } from './test-db.ts'

// The whole app around a fresh database, driven through app.handle(new Request(...)): no port.

export interface TestAccount {
  accountId: string
  email: string
  token: string
}

export interface TestApp {
  app: App
  runtime: Runtime
  db: TestDatabase
  config: Config
  clock: { now: Date }
  logs: string[]
  request(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any }>
  account(email?: string): Promise<TestAccount>
  tokenFor(email: string, options?: { name?: string; expiresInDays?: number }): Promise<string>
  close(): Promise<void>
}

/** The app on a real loopback port, so that Bun's own handling of a request is part of a test. */
export function listenOnLoopback(app: App): { base: string; stop: () => void } {
  const listening = app.listen({ port: 0, hostname: '127.0.0.1', ...LISTEN_OPTIONS })
  return { base: `http://127.0.0.1:${listening.server!.port}`, stop: () => listening.server?.stop(true) }
}

export async function startTestApp(
  env: Record<string, string> = {},
  options: { db?: TestDatabase; queue?: boolean } = {},
): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase())
  // A fixed key: tests never write a key file into the working directory.
  const config = loadConfig({ LOG_LEVEL: 'debug', SECRET_KEY: '42'.repeat(32), ...env })
  const logs: string[] = []
  const logger: Logger = jsonLogger(config.logLevel, (line) => logs.push(line))
  const clock = { now: new Date() }
  const now = () => clock.now
  // Report intake enqueues jobs; tests that ingest start pg-boss (without background maintenance).
  const boss = options.queue ? await startBoss(db.database, { background: false }) : null
  if (boss) await createQueues(boss)
  const runtime = {
    config,
    database: db.database,
    logger,
    now,
    random: systemRandom,
    boss,
    secrets: await openSecretBox(config),
    ...resolvers(config, now),
  }
  const app = buildApp(runtime)
  const s = stores(db.database)
  let counter = 0

  const tokenFor: TestApp['tokenFor'] = async (email, opts = {}) => {
    const created = await createToken(
      { accounts: s.accounts, tokens: s.tokens, random: systemRandom },
      { email, name: opts.name ?? 'test', expiresInDays: opts.expiresInDays, now: now() },
    )
    if (!created.ok) throw new Error(`token: ${created.failure.code}`)
    return created.value.value
  }

  return {
    app,
    runtime,
    db,
    config,
    clock,
    logs,
    async request(method, path, opts = {}) {
      const headers = new Headers(opts.headers)
      if (opts.token !== undefined && opts.token !== null)
        headers.set('authorization', `Bearer ${opts.token}`)
      let body: BodyInit | undefined
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
        if (!headers.has('content-type')) headers.set('content-type', 'application/json')
      }
      const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = text === '' ? null : JSON.parse(text)
      } catch {}
      return { status: response.status, headers: response.headers, body: parsed }
    },
    async account(email) {
      const address = email ?? `user${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`
      const created = await createAccount(
        { accounts: s.accounts, random: systemRandom, hashPassword: async (p) => `plain:${p}` },
        { email: address },
      )
      if (!created.ok) throw new Error(`account: ${created.failure.code}`)
      return { accountId: created.value.accountId, email: address, token: await tokenFor(address) }
    },
    tokenFor,
    async close() {
      await boss?.stop({ graceful: false })
      if (!options.db) await db.drop()
    },
  }
}
