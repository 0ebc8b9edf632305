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
  uniqueIndex,
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

/**
 * SPF changes waiting for approval (issue #19, part 2): at automation level `assisted`, a change of
 * the SPF record of a domain whose zone is on a connected DNS provider is stored here instead of
 * being written, with the record before and after (the diff). Approving writes it through the
 * provider (the write lands in dns_provider_writes, named by `write_id`); it is refused when the
 * live record changed since (`from_record` no longer what the provider holds). The same lifecycle
 * as the DMARC proposals of policy_changes (schema/policy.ts): one waits per domain.
 * docs/spf-management.md "Through a connected provider".
 */
export const spfProposals = pgTable(
  'spf_proposals',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    /** proposed (waiting), applied, rejected (by a user), withdrawn (replaced, or found stale). */
    status: text({ enum: ['proposed', 'applied', 'rejected', 'withdrawn'] }).notNull(),
    /** The SPF record the provider held when proposed; null when the domain had none. */
    fromRecord: text(),
    toRecord: text().notNull(),
    /** The whole TXT set at the apex before and after (other TXT values are kept). */
    before: jsonb(),
    after: jsonb().notNull(),
    /** What made the change (add-to-spf of an IP, activation, detected sources). */
    reason: text().notNull(),
    actor: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    decidedAt: timestamp({ withTimezone: true }),
    decidedBy: text(),
    /** The provider write that applied it (dns_provider_writes.id). */
    writeId: uuid(),
  },
  (t) => [
    index().on(t.domainId, t.createdAt),
    uniqueIndex('spf_proposals_one_waiting_key').on(t.domainId).where(sql`${t.status} = 'proposed'`),
  ],
)
