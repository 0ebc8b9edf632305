import type { PgBoss } from 'pg-boss'
import type { TokenStore } from '../../domain/accounts/ports.ts'
import type { AggregateReportReads } from '../../domain/reports/aggregate-reads.ts'
import { singleFlight } from '../../domain/shared/single-flight.ts'
import type { HostedTxtLookup } from '../../domain/spf-management/ports.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { pgAccountStore } from '../../infrastructure/repositories/pg-account-store.ts'
import { pgAlertFacts } from '../../infrastructure/repositories/pg-alert-facts.ts'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import {
  pgCredentialStore,
  pgPasswordResetStore,
} from '../../infrastructure/repositories/pg-credential-store.ts'
import { pgDemoStore } from '../../infrastructure/repositories/pg-demo-store.ts'
import { pgDmarcHosting } from '../../infrastructure/repositories/pg-dmarc-hosting.ts'
import { pgDomainCheckStore } from '../../infrastructure/repositories/pg-domain-check-store.ts'
import { pgDomainStore } from '../../infrastructure/repositories/pg-domain-store.ts'
import { pgDomainVerifications } from '../../infrastructure/repositories/pg-domain-verification.ts'
import { pgEmbedKeyStore } from '../../infrastructure/repositories/pg-embed-key-store.ts'
import { pgForensicTlsStore } from '../../infrastructure/repositories/pg-forensic-tls-store.ts'
import { pgLoginLinkStore } from '../../infrastructure/repositories/pg-login-link-store.ts'
import { pgMailSuppressionList } from '../../infrastructure/repositories/pg-mail-suppressions.ts'
import { pgInvitationStore, pgMemberStore } from '../../infrastructure/repositories/pg-member-store.ts'
import {
  pgAccountMembers,
  pgMailSuppressionStore,
  pgUnsubscribeTokenStore,
} from '../../infrastructure/repositories/pg-notification-mail-store.ts'
import { pgNotificationSettingsStore } from '../../infrastructure/repositories/pg-notification-settings-store.ts'
import { pgOAuthIdentityStore } from '../../infrastructure/repositories/pg-oauth-identity-store.ts'
import { pgOperationsFacts } from '../../infrastructure/repositories/pg-operations-facts.ts'
import { pgOrganizationStore } from '../../infrastructure/repositories/pg-organization-store.ts'
import { pgPolicyStore } from '../../infrastructure/repositories/pg-policy-store.ts'
import { pgRateLimitCounter } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { pgReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'
import { pgReportSourceFacts } from '../../infrastructure/repositories/pg-report-source-facts.ts'
import { pgSessionStore } from '../../infrastructure/repositories/pg-session-store.ts'
import { pgSourceFigures } from '../../infrastructure/repositories/pg-source-stats.ts'
import { pgSpfProposalStore } from '../../infrastructure/repositories/pg-spf-proposal-store.ts'
import { pgSpfSourceActivity } from '../../infrastructure/repositories/pg-spf-source-activity.ts'
import { pgSpfStore } from '../../infrastructure/repositories/pg-spf-store.ts'
import { pgTokenStore } from '../../infrastructure/repositories/pg-token-store.ts'
import { pgWebhookStore } from '../../infrastructure/repositories/pg-webhook-store.ts'

// The stores of a process, each built once from its database (docs/architecture.md, "The
// composition root"). Routes, pages and jobs receive them (or use cases over them), never the
// database.

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
    // Checked here rather than declared on the adapter, whose query bodies are being reworked.
    reports: pgReportReader(db) satisfies AggregateReportReads,
    forensicTls: pgForensicTlsStore(db, boss),
    alerts: pgAlertStore(db),
    alertFacts: pgAlertFacts(db),
    reportSourceFacts: pgReportSourceFacts(db),
    operationsFacts: pgOperationsFacts(db),
    figures: pgSourceFigures(db),
    sessions: pgSessionStore(db),
    credentials: pgCredentialStore(db),
    resets: pgPasswordResetStore(db),
    links: pgLoginLinkStore(db),
    members: pgMemberStore(db),
    invitations: pgInvitationStore(db),
    oauthIdentities: pgOAuthIdentityStore(db),
    mailSuppressions: pgMailSuppressionStore(db),
    /** The suppressions as the account's members list and lift them. */
    mailSuppressionList: pgMailSuppressionList(db),
    unsubscribeTokens: pgUnsubscribeTokenStore(db),
    accountMembers: pgAccountMembers(db),
  }
}

export type Stores = ReturnType<typeof stores>

/** What a process's stores need besides the database: the secret box, the queue, SPF_ZONE. */
export interface StoreRuntime {
  database: Database
  secrets: SecretBox
  /** The job queue the stores enqueue with (in the transaction that writes the row). */
  boss: PgBoss | null
  /** SPF_ZONE: the hosted SPF and DMARC records live under it. */
  config: { spf: { zone: string } }
}

/** Every store of a serving process: the database's, and those that seal secrets or enqueue. */
export function processStores(runtime: StoreRuntime) {
  const db = runtime.database.db
  return {
    ...stores(runtime.database, runtime.boss),
    webhooks: pgWebhookStore(db, { secrets: runtime.secrets }),
    /** Notification settings: the chat URLs sealed like webhook secrets. */
    notificationSettings: pgNotificationSettingsStore(db, { secrets: runtime.secrets }),
    /** Verifies domains and re-queues the reports that waited for them (on this process's queue). */
    verifications: pgDomainVerifications(db, runtime.boss),
    spf: pgSpfStore(db, { zone: runtime.config.spf.zone }),
    spfActivity: pgSpfSourceActivity(db),
    spfProposals: pgSpfProposalStore(db, runtime.boss),
    dmarcHosting: pgDmarcHosting(db, { zone: runtime.config.spf.zone }),
    policy: pgPolicyStore(db, { zone: runtime.config.spf.zone }),
  }
}

export type ProcessStores = ReturnType<typeof processStores>

/** Domain verification on a given queue (the CLI's, which has no process stores). */
export const verificationStore = (database: Database, boss: PgBoss | null) =>
  pgDomainVerifications(database.db, boss)

/** The demo domain's store (`bun run cli demo`, docs/demo.md). */
export const demoStore = (database: Database) => pgDemoStore(database.db)

/**
 * What the authoritative DNS responder serves (hosted_records under SPF_ZONE, docs/hosted-dns.md),
 * for src/main.ts, which starts the responder beside the API rather than inside it.
 */
export function hostedRecordLookup(runtime: Pick<StoreRuntime, 'database' | 'config'>): HostedTxtLookup {
  return pgSpfStore(runtime.database.db, { zone: runtime.config.spf.zone })
}
