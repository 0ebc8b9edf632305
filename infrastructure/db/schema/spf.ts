import { sql } from 'drizzle-orm'
import {
  bigint,
  index,
  inet,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'
import { domains } from './domains.ts'

// SPF management (issue #5): one managed configuration per domain, every change a numbered version
// with an audit entry, and the TXT records the built-in DNS responder serves for the hosted zone.

export const spfManagement = pgTable('spf_management', {
  domainId: bigint({ mode: 'number' })
    .primaryKey()
    .references(() => domains.id, { onDelete: 'cascade' }),
  accountId: uuid()
    .notNull()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  /** The per-domain label under SPF_ZONE (domain/spf-management/managed-record.ts domainLabel). */
  label: text().notNull().unique(),
  /** The hosted name the user includes: `<label>.<SPF_ZONE>`. */
  hostedName: text().notNull().unique(),
  /** ManagedSpfConfig as JSON. */
  config: jsonb().notNull(),
  version: integer().notNull(),
  activatedAt: timestamp({ withTimezone: true }).notNull(),
  /** When the records were last planned (flattened networks change: re-planned on a schedule). */
  plannedAt: timestamp({ withTimezone: true }).notNull(),
})

export const spfVersions = pgTable(
  'spf_versions',
  {
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    version: integer().notNull(),
    config: jsonb().notNull(),
    /** HostedRecords as JSON: exactly what was served from this version on. */
    records: jsonb().notNull(),
    reason: text().notNull(),
    actor: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.domainId, t.version] })],
)

/** Who changed what, when, from what to what, and why (every SPF change, every DNS write). */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' }).references(() => domains.id, { onDelete: 'set null' }),
    actor: text().notNull(),
    action: text().notNull(),
    before: jsonb(),
    after: jsonb(),
    reason: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index().on(t.accountId, t.createdAt)],
)

/** TXT records served by the built-in responder, by owner name (lower-case, no trailing dot). */
export const hostedRecords = pgTable(
  'hosted_records',
  {
    name: text().primaryKey(),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    kind: text().notNull(),
    txt: text().array().notNull().default(sql`'{}'::text[]`),
    updatedAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index().on(t.domainId)],
)

/** A user's verdict on a source IP of a domain: legitimate, unwanted or forwarder. */
export const sourceOverrides = pgTable(
  'source_overrides',
  {
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    sourceIp: inet().notNull(),
    status: text().notNull(),
    note: text(),
    updatedAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.domainId, t.sourceIp] })],
)
