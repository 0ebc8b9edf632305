import type { PgBoss } from 'pg-boss'
import type { InvitationStore } from '../../domain/accounts/invitations.ts'
import type { LoginLinkStore } from '../../domain/accounts/login-link.ts'
import type { MemberStore } from '../../domain/accounts/members.ts'
import type { OAuthIdentityStore, PasswordRemover } from '../../domain/accounts/oauth-login.ts'
import type { CredentialStore, PasswordHasher } from '../../domain/accounts/password-login.ts'
import type { PasswordResetStore } from '../../domain/accounts/password-reset.ts'
import type { AccountStore, TokenStore } from '../../domain/accounts/ports.ts'
import type { SessionStore } from '../../domain/accounts/sessions.ts'
import type { AlertStore } from '../../domain/alerts/ports.ts'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ProviderDeps } from '../../domain/dns-providers/imports.ts'
import type { DomainStore, OrganizationLookup } from '../../domain/domains/ports.ts'
import type { EmbedKeyStore } from '../../domain/embed/embed-key.ts'
import type { QuarantineStore } from '../../domain/ingest/quarantine.ts'
import type { ChatDeliveryDeps, ChatDeliveryLog } from '../../domain/notifications/chat-delivery.ts'
import type { MailSuppressionList } from '../../domain/notifications/mail-ports.ts'
import type { NotificationSettingsStore } from '../../domain/notifications/settings.ts'
import type { TestEmailSender } from '../../domain/notifications/test-email.ts'
import type { OrganizationStore } from '../../domain/organizations/organization.ts'
import type { CheckDeps } from '../../domain/posture/check-domain.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { AggregateReportReads } from '../../domain/reports/aggregate-reads.ts'
import type { FailureTlsReads } from '../../domain/reports/failure-tls-reads.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { SourceFigures } from '../../domain/sources/ports.ts'
import type { SpfAutomationDeps } from '../../domain/spf-management/proposals.ts'
import type { WebhookStore } from '../../domain/webhooks/settings.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { MailSender } from '../../infrastructure/mail/mail-sender.ts'
import type { Config } from '../config.ts'
import type { IngestNow } from '../wiring/ingest-now.ts'
import type { DmarcPageDeps } from './dmarc-pages.ts'

// What the dashboard's pages need: stores and use-case deps built once by the composition root
// (src/compose.ts, src/compose/stores.ts), never a database.

/** The stores the pages read and write, the same objects the API uses. */
export interface DashboardStores {
  accounts: AccountStore
  domains: DomainStore
  organizations: OrganizationStore & OrganizationLookup
  reports: Omit<AggregateReportReads, 'policyDistribution' | 'learnedSelectors'>
  alerts: AlertStore
  embedKeys: EmbedKeyStore
  forensicTls: FailureTlsReads
  tokens: TokenStore
  sessions: SessionStore
  credentials: CredentialStore
  resets: PasswordResetStore
  links: LoginLinkStore
  members: MemberStore
  invitations: InvitationStore
  oauthIdentities: OAuthIdentityStore & PasswordRemover
  webhooks: WebhookStore
  notificationSettings: NotificationSettingsStore
  /** The addresses not mailed (unsubscribed or bounced), listed and lifted on the notifications page. */
  mailSuppressionList: MailSuppressionList
  /** The report figures (sources, overrides, daily volumes). */
  figures: SourceFigures
  counter: RateLimitCounter
}

export interface DashboardDeps {
  config: Config
  stores: DashboardStores
  logger: Logger
  now: () => Date
  random: RandomBytes
  /** The posture checks with the process's shared DNS cache (what GET /domains/{name}/status uses). */
  checks: CheckDeps
  /** Uncached DNS for ownership verification. */
  verificationDns: DnsResolver
  /** Outgoing mail (MAIL_SMTP_URL and MAIL_FROM). */
  mailer: MailSender
  /** Password hashing (argon2id). */
  passwords: PasswordHasher
  /** Seals the OAuth flow cookie and opens provider secrets. */
  secrets: SecretBox
  /** DNS for the webhook URL check (PUT /webhooks' check) and the source pages. */
  dns: DnsResolver
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean
  /** The job queue (DNS provider imports, SPF re-flattening); null where no queue runs. */
  boss: PgBoss | null
  /** Intake messages (the quarantine page and its retry button). */
  messages: QuarantineStore
  /** Intake with the outcome, for the report upload (POST /api/v1/ingest/reports's). */
  importReport: IngestNow | null
  /** The DNS provider use cases' deps (connections, imports, writes). */
  providers: ProviderDeps
  /** The SPF management use cases' deps, shared with the API. */
  spf: SpfAutomationDeps
  /** DMARC hosting and policy progression, shared with the API. */
  dmarc: DmarcPageDeps
  /** Chat test messages and the channels' last deliveries (the API's POST /notifications/test). */
  chat: Pick<ChatDeliveryDeps, 'settings' | 'post' | 'dashboardUrl' | 'now' | 'logger'> & {
    log: ChatDeliveryLog
  }
  /** The email branch of the test (the mail side's sender, or one answering email_not_configured). */
  testEmail: TestEmailSender
}

export type DashboardServices = ReturnType<typeof dashboardServices>

export function dashboardServices(deps: DashboardDeps) {
  const { stores, ...rest } = deps
  // The stores first: the composition root may hand over more than DashboardStores names (its
  // `checks` store, say), and the deps of the same name win.
  return {
    ...stores,
    ...rest,
    webhookUrl: { dns: deps.dns, allowPrivate: deps.allowPrivate },
  }
}
