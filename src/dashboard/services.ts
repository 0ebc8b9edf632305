import type { PgBoss } from 'pg-boss'
import type { PasswordHasher } from '../../domain/accounts/password-login.ts'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { CheckDeps } from '../../domain/posture/check-domain.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { SourceFigures } from '../../domain/sources/ports.ts'
import type { SourceDeps as SpfSourceDeps } from '../../domain/spf-management/source-use-cases.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { createMailSender, type MailSender } from '../../infrastructure/mail/mail-sender.ts'
import { pgAccountStore } from '../../infrastructure/repositories/pg-account-store.ts'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import {
  pgCredentialStore,
  pgPasswordResetStore,
} from '../../infrastructure/repositories/pg-credential-store.ts'
import { pgDomainStore } from '../../infrastructure/repositories/pg-domain-store.ts'
import { pgEmbedKeyStore } from '../../infrastructure/repositories/pg-embed-key-store.ts'
import { pgForensicTlsStore } from '../../infrastructure/repositories/pg-forensic-tls-store.ts'
import { pgIngestMessageStore } from '../../infrastructure/repositories/pg-ingest-message-store.ts'
import { pgLoginLinkStore } from '../../infrastructure/repositories/pg-login-link-store.ts'
import { pgOrganizationStore } from '../../infrastructure/repositories/pg-organization-store.ts'
import { pgReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'
import { pgSessionStore } from '../../infrastructure/repositories/pg-session-store.ts'
import { pgTokenStore } from '../../infrastructure/repositories/pg-token-store.ts'
import { pgWebhookStore } from '../../infrastructure/repositories/pg-webhook-store.ts'
import type { Config } from '../config.ts'
import type { ProviderDeps } from '../wiring/dns-providers.ts'
import type { IngestNow } from '../wiring/ingest-now.ts'

// What the dashboard's pages need, built once from the deps the composition root hands over.

export interface DashboardDeps {
  config: Config
  database: Database
  logger: Logger
  now: () => Date
  random: RandomBytes
  counter: RateLimitCounter
  /** The posture checks with the process's shared DNS cache (what GET /domains/{name}/status uses). */
  checks: CheckDeps
  /** Uncached DNS for ownership verification. */
  verificationDns: DnsResolver
  /** Outgoing mail; by default built from MAIL_SMTP_URL and MAIL_FROM. */
  mailer?: MailSender
  /** Opens the sealed webhook secrets; without it Settings → API access says webhooks are unavailable. */
  secrets?: SecretBox
  /** DNS for the webhook URL check (PUT /webhooks' check); by default the posture checks' resolver. */
  dns?: DnsResolver
  /** WEBHOOK_ALLOW_PRIVATE; by default read from the config. */
  allowPrivate?: boolean
  /** The job queue (DNS provider imports, SPF re-flattening); null where no queue runs. */
  boss?: PgBoss | null
  /** Intake messages (the quarantine page and its retry button). */
  messages?: ReturnType<typeof pgIngestMessageStore>
  /** Failure and TLS-RPT reports. */
  forensicTls?: ReturnType<typeof pgForensicTlsStore>
  /** Intake with the outcome, for the report upload (POST /api/v1/ingest/reports's). */
  importReport?: IngestNow
  /** The DNS provider use cases' deps (connections, imports, writes). */
  providers: ProviderDeps
  /** The SPF management use cases' deps, shared with the API. */
  spf: SpfSourceDeps
  /** The report figures (sources, overrides, daily volumes). */
  figures: SourceFigures
}

/** argon2id through Bun.password (contract §5), with Bun's default cost (64 MiB, 2 passes). */
export function bunPasswords(): PasswordHasher {
  // Verified against when no user matches, so an unknown email costs what a wrong password does.
  let dummy: Promise<string> | null = null
  return {
    hash: (password) => Bun.password.hash(password, { algorithm: 'argon2id' }),
    async verify(password, hash) {
      if (hash === null) {
        dummy ??= Bun.password.hash(crypto.randomUUID(), { algorithm: 'argon2id' })
        await Bun.password.verify(password, await dummy).catch(() => false)
        return false
      }
      // A hash in an unknown format (not argon2/bcrypt) matches nothing.
      return Bun.password.verify(password, hash).catch(() => false)
    },
  }
}

export type DashboardServices = ReturnType<typeof dashboardServices>

export function dashboardServices(deps: DashboardDeps) {
  const db = deps.database.db
  const accounts = pgAccountStore(db)
  const domains = pgDomainStore(db)
  const reports = pgReportReader(db)
  const { checks } = deps
  return {
    ...deps,
    accounts,
    domains,
    reports,
    alerts: pgAlertStore(db),
    embedKeys: pgEmbedKeyStore(db),
    organizations: pgOrganizationStore(db),
    forensicTls: deps.forensicTls ?? pgForensicTlsStore(db),
    boss: deps.boss ?? null,
    messages: deps.messages ?? pgIngestMessageStore(db, deps.boss ?? null),
    importReport: deps.importReport ?? null,
    tokens: pgTokenStore(db),
    sessions: pgSessionStore(db),
    credentials: pgCredentialStore(db),
    resets: pgPasswordResetStore(db),
    links: pgLoginLinkStore(db),
    passwords: bunPasswords(),
    checks,
    verificationDns: deps.verificationDns,
    webhooks: deps.secrets === undefined ? null : pgWebhookStore(db, { secrets: deps.secrets }),
    webhookUrl: {
      dns: deps.dns ?? checks.dns,
      allowPrivate: deps.allowPrivate ?? deps.config.webhookAllowPrivate,
    },
    mailer:
      deps.mailer ??
      createMailSender({
        smtpUrl: deps.config.mail.smtpUrl,
        from: deps.config.mail.from,
        logger: deps.logger,
      }),
  }
}
