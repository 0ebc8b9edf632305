import { join } from 'node:path'
import { Elysia } from 'elysia'
import type { PgBoss } from 'pg-boss'
import type { TokenStore } from '../domain/accounts/ports.ts'
import { withDemoZone } from '../domain/demo/demo-zone.ts'
import type { DnsResolver } from '../domain/dns/ports.ts'
import { acceptMessage } from '../domain/ingest/accept.ts'
import type { AcceptMessage, KnowsRecipient } from '../domain/ingest/intake.ts'
import { ingestKeyOf } from '../domain/ingest/routing.ts'
import type { CheckDeps } from '../domain/posture/check-domain.ts'
import type { RateLimitPolicy } from '../domain/rate-limits/fixed-window.ts'
import { parseTlsRptReport } from '../domain/reports/tls-rpt.ts'
import { concurrencyLimit } from '../domain/shared/concurrency-limit.ts'
import type { Logger } from '../domain/shared/logger.ts'
import type { RandomBytes } from '../domain/shared/random.ts'
import { singleFlight } from '../domain/shared/single-flight.ts'
import { cacheFound } from '../infrastructure/cache/found-cache.ts'
import { keyFromFile, type SecretBox, secretBox } from '../infrastructure/crypto/secret-box.ts'
import type { Database } from '../infrastructure/db/database.ts'
import { migrationsApplied } from '../infrastructure/db/migrate.ts'
import { type CachingDnsResolver, withTtlCache } from '../infrastructure/dns/dns-cache.ts'
import { createDnsPacketResolver } from '../infrastructure/dns/dns-packet-resolver.ts'
import { createMtaStsFetcher } from '../infrastructure/http/mta-sts-fetcher.ts'
import { recordRequest } from '../infrastructure/metrics/instruments.ts'
import { pgAccountStore } from '../infrastructure/repositories/pg-account-store.ts'
import { pgDomainCheckStore } from '../infrastructure/repositories/pg-domain-check-store.ts'
import { pgDomainStore } from '../infrastructure/repositories/pg-domain-store.ts'
import { pgDomainVerifications } from '../infrastructure/repositories/pg-domain-verification.ts'
import { pgEmbedKeyStore } from '../infrastructure/repositories/pg-embed-key-store.ts'
import { pgForensicTlsStore } from '../infrastructure/repositories/pg-forensic-tls-store.ts'
import { pgIngestMessageStore } from '../infrastructure/repositories/pg-ingest-message-store.ts'
import { pgOrganizationStore } from '../infrastructure/repositories/pg-organization-store.ts'
import { pgRateLimitCounter } from '../infrastructure/repositories/pg-rate-limit-counter.ts'
import { resolveReportDomain } from '../infrastructure/repositories/pg-report-domains.ts'
import { pgReportReader } from '../infrastructure/repositories/pg-report-reader.ts'
import { pgTokenStore } from '../infrastructure/repositories/pg-token-store.ts'
import type { AuthDeps } from '../plugins/auth.ts'
import { bodyLimit } from '../plugins/body-limit.ts'
import { errorMapping, serverErrorOptions } from '../plugins/errors.ts'
import { inputGuard } from '../plugins/input-guard.ts'
import { requestLogging } from '../plugins/logging.ts'
import { openApiDocs } from '../plugins/openapi.ts'
import { requestId } from '../plugins/request-id.ts'
import { routeTable } from '../plugins/route-table.ts'
import type { Config } from './config.ts'
import { messagePage } from './dashboard/layout.ts'
import { dashboardRoutes } from './dashboard/routes.ts'
import type { IngestJobDeps } from './jobs/ingest.ts'
import { alertRoutes } from './routes/alerts.ts'
import { dmarcRoutes } from './routes/dmarc.ts'
import { dnsProviderRoutes } from './routes/dns-providers.ts'
import { domainRoutes } from './routes/domains.ts'
import { embedKeyRoutes, embedPublicRoutes } from './routes/embed.ts'
import { forensicTlsRoutes } from './routes/forensic-tls.ts'
import { healthRoutes } from './routes/health.ts'
import { ingestRoutes } from './routes/ingest.ts'
import { ingestReportRoutes } from './routes/ingest-reports.ts'
import { metricsRoutes } from './routes/metrics.ts'
import { organizationRoutes } from './routes/organizations.ts'
import { postureRoutes } from './routes/posture.ts'
import { providerPublishRoutes } from './routes/provider-publish.ts'
import { reportRoutes } from './routes/reports.ts'
import { sourceRoutes } from './routes/sources.ts'
import { spfRoutes } from './routes/spf.ts'
import { webhookRoutes } from './routes/webhooks.ts'
import { type IngestNow, ingestNow } from './wiring/ingest-now.ts'

// The composition root: the one place that builds adapters and hands them to use cases and routes.

export const VERSION = '0.1.0'

export interface Runtime {
  config: Config
  database: Database
  logger: Logger
  now: () => Date
  random: RandomBytes
  /** The DNS the posture checks use: one TTL cache shared by every check in the process. */
  dns: CachingDnsResolver
  /** Uncached DNS, for ownership verification (a fresh TXT must not wait out a cached NXDOMAIN). */
  verificationDns: DnsResolver
  /** The job queue; report intake enqueues in the transaction that stores the message. */
  boss: PgBoss | null
  /** Seals stored secrets (webhook secrets, DNS provider credentials). */
  secrets: SecretBox
}

/** SECRET_KEY, or the key file in DATA_DIR (created once, 0600). */
export async function openSecretBox(config: Config): Promise<SecretBox> {
  return secretBox(config.secretKey ?? (await keyFromFile(join(config.dataDir, 'secret.key'))))
}

/** The resolvers a process uses, from DNS_SERVERS and DNS_TIMEOUT_MS. */
export function resolvers(config: Config, now: () => Date): Pick<Runtime, 'dns' | 'verificationDns'> {
  // The demo domain's records are answered in-process (docs/demo.md); everything else is real DNS.
  const upstream = withDemoZone(
    createDnsPacketResolver({
      servers: config.dnsServers ?? undefined,
      timeoutMs: config.dnsTimeoutMs,
    }),
  )
  return { dns: withTtlCache(upstream, { now: () => now().getTime() }), verificationDns: upstream }
}

export const systemRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length))

/** The API's token lookup: concurrent requests with one token share one query (single-flight.ts). */
function sharedTokenLookups<T extends Pick<TokenStore, 'findForAuth'>>(store: T): T {
  return { ...store, findForAuth: singleFlight(store.findForAuth) }
}

/** The stores; with the process's queue, the ones that store alert facts enqueue their evaluation. */
export function stores(database: Database, boss: PgBoss | null = null) {
  const db = database.db
  return {
    accounts: pgAccountStore(db),
    tokens: sharedTokenLookups(pgTokenStore(db)),
    domains: pgDomainStore(db),
    organizations: pgOrganizationStore(db),
    counter: pgRateLimitCounter(database.countersDb),
    checks: pgDomainCheckStore(db, boss),
    embedKeys: pgEmbedKeyStore(db),
    reports: pgReportReader(db),
    forensicTls: pgForensicTlsStore(db, boss),
  }
}

export const sha256Hex = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')

/** The one intake function every path (HTTP, CLI, IMAP, SMTP) calls. */
export function intake(runtime: Pick<Runtime, 'config' | 'database' | 'boss' | 'now'>) {
  const store = pgIngestMessageStore(runtime.database.db, runtime.boss)
  // Every message looks its account up by ingest key: cached briefly (docs/ingestion.md).
  const accountByIngestKey = cacheFound((key) => store.accountByIngestKey(key), {
    ttlMs: 30_000,
    max: 10_000,
    now: () => runtime.now().getTime(),
  })
  const messages = { ...store, accountByIngestKey }
  const accept: AcceptMessage = (input) =>
    acceptMessage(
      {
        messages,
        ingestDomain: runtime.config.ingestDomain,
        maxBytes: runtime.config.ingestMaxMessageBytes,
        sha256: sha256Hex,
        now: runtime.now,
      },
      input,
    )
  const knowsRecipient: KnowsRecipient = async (address) => {
    const key = ingestKeyOf(address, runtime.config.ingestDomain)
    return key !== null && (await messages.accountByIngestKey(key)) !== null
  }
  return { messages, accept, knowsRecipient }
}

/** What the report job needs: the worker's, and the same for callers that process inline. */
export function ingestJobDeps(
  runtime: Pick<Runtime, 'config' | 'database' | 'dns' | 'logger' | 'now' | 'boss'>,
  messages: IngestJobDeps['messages'],
): IngestJobDeps {
  const { config } = runtime
  const forensicTls = pgForensicTlsStore(runtime.database.db, runtime.boss)
  return {
    database: runtime.database,
    boss: runtime.boss,
    messages,
    forensicTls,
    dns: runtime.dns,
    logger: runtime.logger,
    now: runtime.now,
    limits: {
      maxDecompressedBytes: config.ingestMaxReportBytes,
      maxZipEntries: 32,
      maxCompressionRatio: 1000,
      maxParts: 1000,
    },
    redactForensic: forensicTls.redactsForensic,
  }
}

// Two files processed inline at once per process: a large report takes ~230 MB and a core while it
// streams (docs/ingestion.md), so more would only compete; the rest wait their turn.
const INLINE_CONCURRENCY = 2

/** Intake that processes at once and answers with the outcome (POST /ingest/reports, cli import, upload). */
export function reportImport(
  runtime: Pick<Runtime, 'config' | 'database' | 'dns' | 'logger' | 'now' | 'boss'>,
): IngestNow {
  const { accept, messages } = intake(runtime)
  return ingestNow({
    accept,
    job: ingestJobDeps(runtime, messages),
    gate: concurrencyLimit(INLINE_CONCURRENCY),
  })
}

/** What posture checks need, for the API and the worker alike. */
export function checkDeps(runtime: Runtime, s: ReturnType<typeof stores>): CheckDeps {
  const { config } = runtime
  return {
    dns: runtime.dns,
    fetchMtaStsPolicy: createMtaStsFetcher({ dns: runtime.dns, allowPrivate: config.webhookAllowPrivate }),
    domains: s.domains,
    checks: s.checks,
    learnedSelectors: s.reports.learnedSelectors,
    reportAddress: async (accountId) =>
      `${(await s.accounts.ingestKeyOf(accountId)) ?? 'unknown'}@${config.ingestDomain}`,
    verifications: pgDomainVerifications(runtime.database.db, runtime.boss),
  }
}

/** What ownership verification needs: the checks' stores with uncached DNS (a fresh record counts). */
export function verificationDeps(runtime: Pick<Runtime, 'verificationDns'>, checks: CheckDeps) {
  return {
    domains: checks.domains,
    verifications: checks.verifications,
    reportAddress: checks.reportAddress,
    dns: runtime.verificationDns,
  }
}

function policies(config: Config): AuthDeps['policies'] {
  const minute = (scope: string, limit: number): RateLimitPolicy => ({ scope, limit, windowSeconds: 60 })
  return {
    api: minute('api', config.rateLimits.apiPerMinute),
    public: minute('public', config.rateLimits.publicPerMinute),
  }
}

export function buildApp(runtime: Runtime) {
  const { config, database, logger, now, random } = runtime
  const s = stores(database, runtime.boss)
  const checks = checkDeps(runtime, s)
  const intakeDeps = intake(runtime)
  const importReport = reportImport(runtime)
  const auth: AuthDeps = {
    tokens: s.tokens,
    counter: s.counter,
    policies: policies(config),
    trustedHops: config.trustProxy,
    now,
  }
  const routes = routeTable()
  const api = new Elysia({ prefix: '/api/v1' })
    .use(domainRoutes({ domains: s.domains, organizations: s.organizations, auth, random }))
    .use(organizationRoutes({ domains: s.domains, organizations: s.organizations, auth }))
    .use(
      postureRoutes({ ...checks, auth, counter: s.counter, verificationDns: runtime.verificationDns, now }),
    )
    .use(embedKeyRoutes({ embedKeys: s.embedKeys, random, auth, publicUrl: config.publicUrl }))
    .use(reportRoutes({ reports: s.reports, auth, now }))
    .use(sourceRoutes({ database, reports: s.reports, auth, dns: runtime.dns, now }))
    .use(
      dmarcRoutes({
        database,
        reportAddress: checks.reportAddress,
        reports: s.reports,
        auth,
        dns: runtime.dns,
        now,
        counter: s.counter,
        dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
        spf: config.spf,
      }),
    )
    .use(alertRoutes({ database, auth, now }))
    .use(
      dnsProviderRoutes({
        database,
        boss: runtime.boss,
        verificationDns: runtime.verificationDns,
        auth,
        now,
        random,
        secrets: runtime.secrets,
        dns: runtime.dns,
        counter: s.counter,
        dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
        allowPrivate: config.webhookAllowPrivate,
      }),
    )
    .use(
      providerPublishRoutes({
        database,
        auth,
        now,
        secrets: runtime.secrets,
        dns: runtime.dns,
        verificationDns: runtime.verificationDns,
        counter: s.counter,
        dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
        allowPrivate: config.webhookAllowPrivate,
        spf: config.spf,
      }),
    )
    .use(
      webhookRoutes({
        database,
        auth,
        now,
        random,
        secrets: runtime.secrets,
        dns: runtime.dns,
        allowPrivate: config.webhookAllowPrivate,
      }),
    )
    .use(
      spfRoutes({
        database,
        reports: s.reports,
        auth,
        dns: runtime.dns,
        now,
        counter: s.counter,
        dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
        spf: config.spf,
      }),
    )
    .use(forensicTlsRoutes({ store: s.forensicTls, reports: s.reports, auth, now }))
    .use(ingestReportRoutes({ importReport, auth, maxMessageBytes: config.ingestMaxMessageBytes }))
    .use(
      ingestRoutes({
        ...intakeDeps,
        auth,
        ingestDomain: config.ingestDomain,
        ingestSecret: config.ingestSecret,
        maxMessageBytes: config.ingestMaxMessageBytes,
        reportAddress: checks.reportAddress,
        async storeTlsReport(accountId, json) {
          const parsed = parseTlsRptReport(json)
          if (!parsed.ok) return { ok: false, code: parsed.error.code, message: parsed.error.message }
          const domain = await resolveReportDomain(
            database.db,
            accountId,
            parsed.report.policies[0]?.policyDomain ?? '',
          )
          if (!domain.ok) return { ok: false, ...domain.reason }
          const stored = await s.forensicTls.insertTls({
            accountId,
            domainId: domain.domainId,
            messageId: null,
            report: parsed.report,
          })
          return { ok: true, ...stored }
        },
      }),
    )

  const app = new Elysia({ serve: serverErrorOptions(logger) })
    .use(requestId)
    .use(requestLogging(logger, { recordRequest }))
    .use(
      errorMapping({
        logger,
        allowedMethods: routes.allowedMethods,
        notFoundPage: () =>
          messagePage({
            status: 404,
            title: 'Page not found',
            message: 'There is no page at this address. It may have moved, or the link may be mistyped.',
            viewer: null,
          }),
        badRequestPage: (message) =>
          messagePage({ status: 400, title: 'Request refused', message, viewer: null }),
      }),
    )
    .use(inputGuard)
    .use(
      bodyLimit({
        defaultBytes: config.maxJsonBodyBytes,
        byPrefix: [
          { prefix: '/api/v1/ingest/messages', bytes: config.ingestMaxMessageBytes },
          { prefix: '/api/v1/ingest/tls-rpt', bytes: config.ingestMaxMessageBytes },
          { prefix: '/api/v1/ingest/reports', bytes: config.ingestMaxMessageBytes },
          { prefix: '/reports/upload', bytes: config.ingestMaxMessageBytes },
        ],
        rawPrefixes: ['/api/v1/ingest/messages', '/api/v1/ingest/tls-rpt', '/api/v1/ingest/reports'],
      }),
    )
    .use(openApiDocs({ version: VERSION, publicUrl: config.publicUrl }))
    .use(healthRoutes({ ready: () => migrationsApplied(database) }))
    .use(metricsRoutes({ token: config.metricsToken, boss: runtime.boss, dns: runtime.dns }))
    .use(api)
    .use(embedPublicRoutes({ ...checks, embedKeys: s.embedKeys, auth, now }))
    .use(
      dashboardRoutes({
        config,
        database,
        logger,
        now,
        random,
        counter: s.counter,
        checks,
        verificationDns: runtime.verificationDns,
        secrets: runtime.secrets,
        dns: runtime.dns,
        allowPrivate: config.webhookAllowPrivate,
        boss: runtime.boss,
        messages: intakeDeps.messages,
        forensicTls: s.forensicTls,
        importReport,
      }),
    )
  routes.load(app.routes)
  return app
}

export type App = ReturnType<typeof buildApp>
