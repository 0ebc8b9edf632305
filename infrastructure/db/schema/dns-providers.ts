import {
  bigint,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'
import { domains } from './domains.ts'

// DNS provider connections, domain imports and writes through providers (issue #7, part 2;
// docs/dns-providers.md "Connections, import and writes").

/**
 * One set of provider credentials of an account. What may be shown (base URL, server, zones, key
 * name and algorithm) is in `settings`; the secret part (API key, API token, TSIG secret) only in
 * `credentials_sealed`, sealed with the context `dns-provider:<id>` so a value copied into another
 * row does not open there.
 */
export const dnsProviderConnections = pgTable(
  'dns_provider_connections',
  {
    id: uuid().primaryKey(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** `powerdns`, `cloudflare` or `rfc2136`. */
    provider: text().notNull(),
    name: text().notNull(),
    settings: jsonb().notNull(),
    credentialsSealed: text().notNull(),
    /** Who the provider says the credentials belong to, when it says (Cloudflare's token id, a key name). */
    providerAccount: text(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    lastVerifiedAt: timestamp({ withTimezone: true }).notNull(),
    /**
     * Set when reading records through the connection failed (a write's current-record read or its
     * read-back: HTTP error, bad credentials, timeout), cleared by the next read that succeeds: the
     * `dns_provider_read_failing` alert reads it (docs/alerts.md).
     */
    readFailedAt: timestamp({ withTimezone: true }),
    readError: text(),
  },
  (t) => [
    index().on(t.accountId, t.createdAt),
    // Target of the imports' composite foreign key: an import can only use its own account's connection.
    unique('dns_provider_connections_id_account_key').on(t.id, t.accountId),
  ],
)

/** A domain import: the zones of a connection created as domains, zone by zone, by one job. */
export const dnsProviderImports = pgTable(
  'dns_provider_imports',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    connectionId: uuid().notNull(),
    /** queued, running, done or failed (the provider could not list its zones, the connection went). */
    status: text().notNull(),
    /** The zones asked for; null imports every zone of the connection. */
    zonesRequested: jsonb().$type<string[] | null>(),
    /** One entry per zone handled so far, in order: `{zone, domain, status, reason, verified}`. */
    results: jsonb().notNull().default([]),
    /** Zones to handle, once the provider listed them. */
    total: integer(),
    imported: integer().notNull().default(0),
    skipped: integer().notNull().default(0),
    failed: integer().notNull().default(0),
    error: text(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    startedAt: timestamp({ withTimezone: true }),
    finishedAt: timestamp({ withTimezone: true }),
  },
  (t) => [
    index().on(t.accountId, t.createdAt),
    foreignKey({
      columns: [t.connectionId, t.accountId],
      foreignColumns: [dnsProviderConnections.id, dnsProviderConnections.accountId],
      name: 'dns_provider_imports_connection_fk',
    }).onDelete('cascade'),
  ],
)

/**
 * Every record set written through a provider: the set before and after, and how far the write
 * got (planned → applied → verified, or failed; rolled_back once `before` is restored). Kept when
 * the connection or the domain is removed, as the history of what was done to someone's DNS.
 */
export const dnsProviderWrites = pgTable(
  'dns_provider_writes',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' }).references(() => domains.id, { onDelete: 'set null' }),
    /** The domain's name, kept when the domain is deleted. */
    domainName: text().notNull(),
    connectionId: uuid().references(() => dnsProviderConnections.id, { onDelete: 'set null' }),
    provider: text().notNull(),
    /** The zone's name, and the provider's id for it (Cloudflare's zone id, PowerDNS's `name.`). */
    zone: text().notNull(),
    zoneId: text().notNull(),
    name: text().notNull(),
    type: text().notNull(),
    /** The RecordSet before the write, null when there was none. */
    before: jsonb(),
    /** The RecordSet written. */
    after: jsonb().notNull(),
    status: text().notNull(),
    error: text(),
    /** `user:<id>` or `system` (import verification records). */
    actor: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    appliedAt: timestamp({ withTimezone: true }),
    verifiedAt: timestamp({ withTimezone: true }),
    rolledBackAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.accountId, t.createdAt)],
)
