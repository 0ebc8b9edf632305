import { join, resolve } from 'node:path'
import type { PgBoss } from 'pg-boss'
import { errorFields, errorLine } from '../domain/shared/logger.ts'
import { migrate, migrationsApplied } from '../infrastructure/db/migrate.ts'
import { startAuthoritativeResponder } from '../infrastructure/dns/authoritative-responder.ts'
import { batchedStdout, jsonLogger } from '../infrastructure/logging/json-logger.ts'
import { INTAKE_SOCKET_FILE, serveIntakeSocket } from '../infrastructure/mail/intake-socket.ts'
import { createQueues } from '../infrastructure/queue/catalogue.ts'
import { startBoss } from '../infrastructure/queue/pg-boss.ts'
import { setProcessNice } from '../infrastructure/runtime/process-priority.ts'
import { serverErrorOptions } from '../plugins/errors.ts'
import { resolvers } from './compose/dns.ts'
import { localIngestWake } from './compose/ingest.ts'
import { reportProcessBytes } from './compose/report-processes.ts'
import { hostedRecordLookup } from './compose/stores.ts'
import { type App, buildApp, intake, LISTEN_OPTIONS, openSecretBox, systemRandom } from './compose.ts'
import { ConfigError, loadConfig } from './config.ts'
import { openDatabase } from './open-database.ts'
import { boundedReadiness } from './readiness.ts'
import { workerEndpoints } from './routes/metrics.ts'
import { startWorkers } from './worker.ts'

// `bun run start`: the API and the background worker in one process; ROLE=api or ROLE=worker runs
// one of them, for scaling out on one PostgreSQL.

let config: ReturnType<typeof loadConfig>
try {
  config = loadConfig()
  // PORT=0 picks a free port. Picked here, before anything is built, so that the default
  // PUBLIC_URL (links, the dashboard's form check) names it rather than `localhost:0`.
  if (config.port === 0 && config.role !== 'worker') {
    let port: number
    try {
      const probe = Bun.serve({
        port: 0,
        hostname: config.host,
        reusePort: false,
        fetch: () => new Response(),
      })
      port = probe.port ?? 0
      await probe.stop(true)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      console.error(`dmarcwatch not started: the API cannot listen on ${config.host} (${reason}): check HOST`)
      process.exit(1)
    }
    config = loadConfig({ ...process.env, PORT: String(port) })
  }
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message)
    process.exit(1)
  }
  throw error
}

const logger = jsonLogger(config.logLevel, batchedStdout())
// A worker lowers its CPU priority first, so every thread it starts later inherits it
// (infrastructure/runtime/process-priority.ts). With the API in this process there is nothing
// of its own to yield to: the setting is for ROLE=worker only.
if (config.workerNice > 0 && config.role !== 'worker')
  logger.warn('WORKER_NICE applies to ROLE=worker processes only; ignored', { role: config.role })
const priority = config.workerNice > 0 && config.role === 'worker' ? setProcessNice(config.workerNice) : null
/** What the start has opened so far: closed, the last first, when it cannot finish. */
const opened: (() => Promise<unknown>)[] = []

/** One line on why, what was started stopped, exit code 1: never a stack trace. */
async function notStarted(reason: string): Promise<never> {
  logger.error('dmarcwatch not started', { reason })
  for (const close of opened.reverse()) await close().catch(() => {})
  process.exit(1)
}

/** A step of the start that fails for a reason of the setup (the database, DATA_DIR). */
async function setupOrExit<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    const setting = config.databaseUrl === null ? 'DATA_DIR' : 'DATABASE_URL'
    return notStarted(`${what} (${errorLine(error)}): check ${setting}`)
  }
}
const database = await setupOrExit('cannot open the database', () =>
  openDatabase(config, { serveSocket: true }),
)
opened.push(() => database.close())
if (config.databaseUrl === null && database.kind !== 'pglite') {
  await database.close()
  logger.error('another dmarcwatch service is already running on DATA_DIR', { data_dir: config.dataDir })
  process.exit(1)
}
await setupOrExit('cannot migrate the database', () => migrate(database))
const now = () => new Date()
const boss: PgBoss = await setupOrExit('cannot start the job queue', async () => {
  const started = await startBoss(database, { background: config.role !== 'api' })
  opened.push(() => started.stop({ graceful: false, close: false }))
  await createQueues(started)
  return started
})
const secrets = await openSecretBox(config)
const hostedRecords = hostedRecordLookup({ database, config })
// With the API here on PostgreSQL, large messages are digested by report processes of their own
// (INGEST_PROCESS_BYTES; docs/ingestion.md, "Large messages in a process of their own").
const processBytes = reportProcessBytes(config, database)
const runtime = {
  config,
  database,
  logger,
  now,
  random: systemRandom,
  boss,
  secrets,
  ...resolvers(config, now),
  // With the worker here (ROLE=all; in ROLE=worker the IMAP intake), a message accepted here wakes
  // this process's ingest worker once its statement has committed, instead of waiting for its poll.
  // ROLE=api has none to wake: ROLE=worker processes find its jobs at their next poll
  // (docs/ingestion.md, "Waking the local worker").
  wakeIngest: config.role !== 'api' ? localIngestWake(boss, logger, processBytes) : undefined,
  reportProcessBytes: processBytes,
}
// In ROLE=all on PostgreSQL the worker has a pool of its own (WORKER_DB_POOL), so a request never
// waits for a connection behind a large report's transaction or a batch of stores (issue #20).
// The embedded database has one session whatever the pools, and ROLE=worker has no API to protect.
// WORKER_DB_POOL=0 shares the API's pool (as before issue #20).
const workerDatabase =
  config.role === 'all' && database.kind === 'postgres' && config.workerDbPool > 0
    ? await openDatabase(config, { serveSocket: false, poolSize: config.workerDbPool })
    : database
if (workerDatabase !== database) opened.push(() => workerDatabase.close())
// Every listener first, then the workers: a port in use ends the start before any job has run.
let app: App | null = null
if (config.role !== 'worker') {
  app = await listenOrExit({ name: 'the API', host: 'HOST', port: 'PORT' }, config.host, config.port, () =>
    buildApp(runtime).listen({ port: config.port, hostname: config.host, ...LISTEN_OPTIONS }),
  )
  const listening = app
  opened.push(() => listening.stop(true))
}

/**
 * A listener, or a one-line reason and exit code 1: a port in use or a host that is no address of
 * this machine used to end the start with a stack trace.
 */
async function listenOrExit<T>(
  settings: { name: string; host: string; port: string },
  host: string,
  port: number,
  listen: () => T | Promise<T>,
): Promise<T> {
  try {
    return await listen()
  } catch (error) {
    const code = (error as { code?: string }).code
    return notStarted(
      code === 'EADDRINUSE'
        ? `${settings.name}'s port ${port} is in use by another program or service: stop it, or set ${settings.port} to a free port`
        : `${settings.name} cannot listen on ${host}:${port} (${errorLine(error)}): check ${settings.host} and ${settings.port}`,
    )
  }
}

// A worker has no API to scrape: with METRICS_PORT it serves /metrics (METRICS_TOKEN), /healthz and
// /readyz on a port of its own. With the API (ROLE=all or api) /metrics is an API route instead.
const metricsPort = config.metricsPort
const metricsServer =
  config.role === 'worker' && metricsPort !== null
    ? await listenOrExit(
        { name: 'the metrics endpoint', host: 'HOST', port: 'METRICS_PORT' },
        config.host,
        metricsPort,
        () =>
          Bun.serve({
            port: metricsPort,
            hostname: config.host,
            ...serverErrorOptions(logger),
            fetch: workerEndpoints({
              token: config.metricsToken,
              boss,
              dns: runtime.dns,
              ready: boundedReadiness(() => migrationsApplied(database)),
            }),
          }),
      )
    : null
// The SMTP/LMTP listener and the CLI pipe hand messages to one intake (one ingest-key cache).
const mailIntake = { ...intake(runtime), logger }
// The SMTP/LMTP listener makes the service an MX for its report domain (runs with the API).
const smtpConfig = config.smtp
const smtp =
  smtpConfig !== null && config.role !== 'worker'
    ? await listenOrExit(
        { name: 'the SMTP listener', host: 'SMTP_HOST', port: 'SMTP_PORT' },
        smtpConfig.host,
        smtpConfig.port,
        async () =>
          // Loaded only when configured: smtp-server and its share of nodemailer stay out of memory
          // otherwise (docs/operations.md, "Sizing").
          (await import('../infrastructure/mail/smtp-listener.ts')).startSmtpListener(mailIntake, {
            host: smtpConfig.host,
            port: smtpConfig.port,
            lmtp: smtpConfig.lmtp,
            maxMessageBytes: config.ingestMaxMessageBytes,
            domain: config.ingestDomain,
          }),
      )
    : null
// The embedded database's holder takes `bun run cli ingest` messages on DATA_DIR/intake.sock, so a
// mail server's burst of pipe processes costs no database sessions (docs/ingestion.md).
const intakeSocketPath = join(resolve(config.dataDir), INTAKE_SOCKET_FILE)
// A DATA_DIR too long for a Unix socket's path (107 bytes) gets none: the CLI and psql cannot reach
// the running service, and `cli ingest` would defer every message (75) while it runs.
if (database.kind === 'pglite' && database.stopSocket === undefined)
  logger.warn('DATA_DIR is too long for its Unix sockets: the CLI cannot reach the running service', {
    data_dir: resolve(config.dataDir),
    fix: 'use a DATA_DIR whose absolute path has at most 93 characters',
  })
const intakeSocket =
  database.kind === 'pglite' && database.stopSocket !== undefined
    ? await serveIntakeSocket(mailIntake, {
        path: intakeSocketPath,
        maxMessageBytes: config.ingestMaxMessageBytes,
      }).catch((error: unknown) =>
        notStarted(
          `the intake socket cannot listen on ${intakeSocketPath} (${errorLine(error)}): check DATA_DIR`,
        ),
      )
    : null
// The authoritative responder for SPF_ZONE (managed SPF and DMARC records) runs with the API.
const dnsPort = config.spf.dnsPort
const responder =
  dnsPort !== null && config.role !== 'worker'
    ? await listenOrExit(
        { name: 'the DNS responder', host: 'SPF_DNS_HOST', port: 'SPF_DNS_PORT' },
        config.spf.dnsHost,
        dnsPort,
        () =>
          startAuthoritativeResponder({
            host: config.spf.dnsHost,
            port: dnsPort,
            zone: config.spf.zone,
            nameservers: config.spf.nameservers,
            hostmaster: config.spf.hostmaster,
            lookup: (name) => hostedRecords.hostedTxt(name),
            logger,
          }),
      )
    : null
if (config.role !== 'api') await startWorkers(boss, { ...runtime, database: workerDatabase })
logger.info('dmarcwatch started', {
  role: config.role,
  database: database.kind === 'pglite' ? `embedded (${config.dataDir})` : 'postgresql',
  url: app ? `http://${config.host}:${app.server?.port}` : undefined,
  docs: app ? `${config.publicUrl}/swagger` : undefined,
  smtp: smtp ? `${config.smtp?.lmtp ? 'lmtp' : 'smtp'}://${config.smtp?.host}:${smtp.port}` : undefined,
  dns: responder ? `${config.spf.dnsHost}:${responder.port} (${config.spf.zone})` : undefined,
  metrics: metricsServer ? `http://${config.host}:${metricsServer.port}/metrics` : undefined,
  intake_socket: intakeSocket ? intakeSocketPath : undefined,
  nice: priority?.nice,
})

let stopping = false
async function shutdown(signal: string): Promise<void> {
  if (stopping) return
  stopping = true
  logger.info('shutting down', { signal })
  // Whatever happens below, the process is gone within the shutdown budget.
  const deadline = setTimeout(() => {
    logger.error('shutdown timed out; exiting')
    process.exit(1)
  }, config.shutdownTimeoutMs)
  deadline.unref()
  try {
    // Stop taking requests and let in-flight ones finish, then let running jobs finish.
    await app?.stop(false)
    await metricsServer?.stop()
    await smtp?.close()
    await intakeSocket?.close()
    if (database.kind === 'pglite') await database.stopSocket?.()
    await responder?.close()
    await boss.stop({
      graceful: true,
      timeout: Math.max(1000, config.shutdownTimeoutMs - 3000),
      close: false,
    })
    if (workerDatabase !== database) await workerDatabase.close()
    await database.close()
    logger.info('stopped')
    process.exit(0)
  } catch (error) {
    logger.error('shutdown failed', errorFields(error))
    process.exit(1)
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('unhandledRejection', (error) => logger.error('unhandled rejection', errorFields(error)))
