import { join } from 'node:path'
import { Elysia } from 'elysia'
import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../domain/dns/ports.ts'
import { emailTestSender } from '../domain/notifications/email-test.ts'
import { dnsWriteGate } from '../domain/rate-limits/dns-writes.ts'
import type { RateLimitPolicy } from '../domain/rate-limits/fixed-window.ts'
import { storeTlsReport } from '../domain/reports/store-failure-tls.ts'
import type { Logger } from '../domain/shared/logger.ts'
import type { RandomBytes } from '../domain/shared/random.ts'
import { bunPasswords } from '../infrastructure/crypto/passwords.ts'
import { keyFromFile, type SecretBox, secretBox } from '../infrastructure/crypto/secret-box.ts'
import type { Database } from '../infrastructure/db/database.ts'
import { isDatabaseUnavailable } from '../infrastructure/db/errors.ts'
import { migrationsApplied } from '../infrastructure/db/migrate.ts'
import type { CachingDnsResolver } from '../infrastructure/dns/dns-cache.ts'
import { createMailSender } from '../infrastructure/mail/mail-sender.ts'
import { recordRequest } from '../infrastructure/metrics/instruments.ts'
import type { AuthDeps } from '../plugins/auth.ts'
import { bodyLimit } from '../plugins/body-limit.ts'
import { errorMapping, serverErrorOptions } from '../plugins/errors.ts'
import { inputGuard } from '../plugins/input-guard.ts'
import { requestLogging } from '../plugins/logging.ts'
import { openApiDocs } from '../plugins/openapi.ts'
import { requestId } from '../plugins/request-id.ts'
import { routeTable } from '../plugins/route-table.ts'
import { providerDeps } from './compose/dns-providers.ts'
import { intake, reportDomains, reportImport } from './compose/ingest.ts'
import { digestPreviewDeps, sendMailDeps } from './compose/notification-mail.ts'
import { chatDeliveryDeps } from './compose/notifications.ts'
import { progressionDeps } from './compose/policy.ts'
import { checkDeps } from './compose/posture.ts'
import { reportProcessWarmer } from './compose/report-processes.ts'
import { spfUseCaseDeps } from './compose/spf.ts'
import { processStores, stores } from './compose/stores.ts'
import type { Config } from './config.ts'
import { messagePage } from './dashboard/layout.ts'
import { dashboardRoutes } from './dashboard/routes.ts'
import { unsubscribePages } from './dashboard/unsubscribe-pages.ts'
import { boundedReadiness } from './readiness.ts'
import { alertRoutes } from './routes/alerts.ts'
import { API_FALLBACK_PATH, apiFallbackRoutes } from './routes/api-fallback.ts'
import { dmarcRoutes } from './routes/dmarc.ts'
import { dnsProviderRoutes } from './routes/dns-providers.ts'
import { domainRoutes } from './routes/domains.ts'
import { embedKeyRoutes, embedPublicRoutes } from './routes/embed.ts'
import { forensicTlsRoutes } from './routes/forensic-tls.ts'
import { healthRoutes } from './routes/health.ts'
import { ingestRoutes, tlsRptBodyBytes } from './routes/ingest.ts'
import { ingestReportRoutes } from './routes/ingest-reports.ts'
import { metricsRoutes } from './routes/metrics.ts'
import { notificationDigestRoutes } from './routes/notification-digest.ts'
import { notificationSuppressionRoutes } from './routes/notification-suppressions.ts'
import { notificationRoutes } from './routes/notifications.ts'
import { organizationRoutes } from './routes/organizations.ts'
import { postureRoutes } from './routes/posture.ts'
import { providerPublishRoutes } from './routes/provider-publish.ts'
import { reportRoutes } from './routes/reports.ts'
import { sourceRoutes } from './routes/sources.ts'
import { spfRoutes } from './routes/spf.ts'
import { spfProposalRoutes } from './routes/spf-proposals.ts'
import { webhookRoutes } from './routes/webhooks.ts'

export { intake } from './compose/ingest.ts'
export { stores }

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
  /**
   * Wakes this process's ingest worker after intake committed a message of `bytes` bytes
   * (src/compose/ingest.ts): set only where the worker runs beside the intake; elsewhere it polls.
   */
  wakeIngest?: (bytes: number) => void
  /**
   * Messages of this many bytes or more are digested by a report process of their own (src/main.ts
   * sets it for the service: reportProcessBytes in src/compose/report-processes.ts); unset, in this
   * process.
   */
  reportProcessBytes?: number | null
}

/** SECRET_KEY, or the key file in DATA_DIR (created once, 0600). */
export async function openSecretBox(config: Config): Promise<SecretBox> {
  return secretBox(config.secretKey ?? (await keyFromFile(join(config.dataDir, 'secret.key'))))
}

export const systemRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length))

function policies(config: Config): AuthDeps['policies'] {
  const minute = (scope: string, limit: number): RateLimitPolicy => ({ scope, limit, windowSeconds: 60 })
  return {
    api: minute('api', config.rateLimits.apiPerMinute),
    public: minute('public', config.rateLimits.publicPerMinute),
  }
}

export function buildApp(runtime: Runtime) {
  const { config, database, logger, now, random } = runtime
  const s = processStores(runtime)
  const checks = checkDeps(runtime, s)
  const intakeDeps = intake(runtime)
  const importReport = reportImport(runtime, { ...intakeDeps, forensicTls: s.forensicTls })
  const providers = providerDeps(runtime, s.counter)
  // One DNS write gate for hosted DMARC and SPF management (provider writes count in the same scope).
  const dnsWrites = dnsWriteGate({
    counter: s.counter,
    perMinute: config.rateLimits.dnsWritesPerMinute,
    now,
  })
  const spf = spfUseCaseDeps(s, runtime, dnsWrites)
  // DMARC hosting and policy progression: the API and the dashboard share one set of deps.
  const dmarc = {
    hosting: { store: s.dmarcHosting, dns: runtime.dns, now, reportAddress: checks.reportAddress, dnsWrites },
    progression: { ...progressionDeps(s, runtime, providers), dnsWrites },
  }
  // Notifications: chat test messages and last deliveries; the test email, sent now (docs/notifications.md).
  const chat = chatDeliveryDeps(runtime, s.notificationSettings, runtime.boss)
  const testEmail = emailTestSender({
    send: sendMailDeps(runtime, s),
    settings: s.notificationSettings,
    members: s.accountMembers,
    smtpConfigured: config.mail.smtpUrl !== null,
  })
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
    .use(sourceRoutes({ figures: s.figures, reports: s.reports, auth, dns: runtime.dns, now }))
    .use(dmarcRoutes({ ...dmarc, reports: s.reports, auth }))
    .use(notificationDigestRoutes({ digest: digestPreviewDeps(runtime, s), auth }))
    .use(alertRoutes({ alerts: s.alerts, auth, now }))
    .use(dnsProviderRoutes({ providers, auth, now }))
    .use(
      providerPublishRoutes({
        providers,
        spf: { store: s.spf, zone: config.spf.zone },
        hosting: s.dmarcHosting,
        auth,
      }),
    )
    .use(
      webhookRoutes({
        webhooks: s.webhooks,
        auth,
        now,
        random,
        dns: runtime.dns,
        allowPrivate: config.webhookAllowPrivate,
      }),
    )
    .use(
      notificationRoutes({
        settings: s.notificationSettings,
        chat,
        testEmail,
        auth,
        dns: runtime.dns,
        allowPrivate: config.webhookAllowPrivate,
      }),
    )
    .use(notificationSuppressionRoutes({ suppressions: s.mailSuppressionList, auth }))
    .use(spfRoutes({ spf, reports: s.reports, auth, providers }))
    .use(spfProposalRoutes({ spf, auth, providers }))
    .use(forensicTlsRoutes({ failureTls: s.forensicTls, reports: s.reports, auth, now }))
    .use(ingestReportRoutes({ importReport, auth, maxMessageBytes: config.ingestMaxMessageBytes }))
    .use(
      ingestRoutes({
        ...intakeDeps,
        auth,
        ingestDomain: config.ingestDomain,
        ingestSecret: config.ingestSecret,
        maxMessageBytes: config.ingestMaxMessageBytes,
        reportAddress: checks.reportAddress,
        // A large message's report process starts while the message arrives.
        arriving: reportProcessWarmer(runtime.reportProcessBytes ?? null, config, database),
        async storeTlsReport(accountId, json) {
          const deps = { reports: s.forensicTls, resolveDomain: reportDomains(database) }
          const stored = await storeTlsReport(deps, { accountId, messageId: null, json })
          return stored.ok
            ? { ok: true, status: stored.status, id: stored.id }
            : { ok: false, ...stored.reason }
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
        isUnavailable: isDatabaseUnavailable,
      }),
    )
    .use(inputGuard)
    .use(
      bodyLimit({
        defaultBytes: config.maxJsonBodyBytes,
        byPrefix: [
          { prefix: '/api/v1/ingest/messages', bytes: config.ingestMaxMessageBytes },
          { prefix: '/api/v1/ingest/tls-rpt', bytes: tlsRptBodyBytes(config.ingestMaxMessageBytes) },
          { prefix: '/api/v1/ingest/reports', bytes: config.ingestMaxMessageBytes },
          { prefix: '/reports/upload', bytes: config.ingestMaxMessageBytes },
        ],
        rawPrefixes: ['/api/v1/ingest/messages', '/api/v1/ingest/tls-rpt', '/api/v1/ingest/reports'],
      }),
    )
    .use(openApiDocs({ version: VERSION, publicUrl: config.publicUrl }))
    .use(healthRoutes({ ready: boundedReadiness(() => migrationsApplied(database)) }))
    .use(metricsRoutes({ token: config.metricsToken, boss: runtime.boss, dns: runtime.dns }))
    .use(api)
    .use(embedPublicRoutes({ ...checks, embedKeys: s.embedKeys, auth, now }))
    .use(apiFallbackRoutes({ auth }))
    .use(unsubscribePages({ tokens: s.unsubscribeTokens, now }))
    .use(
      dashboardRoutes({
        config,
        stores: s,
        logger,
        now,
        random,
        checks,
        verificationDns: runtime.verificationDns,
        mailer: createMailSender({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger }),
        passwords: bunPasswords(),
        secrets: runtime.secrets,
        dns: runtime.dns,
        allowPrivate: config.webhookAllowPrivate,
        boss: runtime.boss,
        messages: intakeDeps.messages,
        importReport,
        providers,
        spf,
        dmarc,
        chat,
        testEmail,
      }),
    )
  routes.load(app.routes.filter((route) => route.path !== API_FALLBACK_PATH))
  return app
}

export type App = ReturnType<typeof buildApp>

/** How the API's HTTP server listens (src/main.ts; the tests' loopback servers use the same). */
export const LISTEN_OPTIONS = {
  // Elysia asks Bun for SO_REUSEPORT by default: a second service started on the same port (on
  // another DATA_DIR) then came up beside the first and took half of its requests. A port in use
  // is an error at start, as for any server.
  reusePort: false,
  // No cap of Bun's own: its bare 413 (no JSON, no request id) answered a body past the cap before
  // any route. Every route's limit is ours (plugins/body-limit.ts): by Content-Length before
  // reading, or as soon as a body without one passes it. The answer goes out at once; what the
  // client still sends of the body is read and dropped, never kept (tests/api/body-cap.test.ts),
  // so the client reads the answer rather than a reset connection.
  maxRequestBodySize: Number.MAX_SAFE_INTEGER,
} as const
