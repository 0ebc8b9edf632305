import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  customType,
  date,
  index,
  inet,
  integer,
  json,
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

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' })

// Accepting a message is one write here (plus its job, in the same transaction). The raw bytes stay
// until parsing succeeds; a message that cannot be parsed stays, quarantined, with the reason.
export const ingestMessages = pgTable(
  'ingest_messages',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    source: text({ enum: ['http', 'cli', 'imap', 'smtp', 'dashboard'] }).notNull(),
    recipient: text(),
    /** The message, when it fits in one piece (MESSAGE_PIECE_BYTES); larger ones are in ingest_message_pieces. */
    raw: bytea(),
    /** How many rows of ingest_message_pieces hold the message (0: it is in raw, or gone by retention). */
    pieces: integer().notNull().default(0),
    size: integer().notNull(),
    sha256: text().notNull(),
    receivedAt: timestamp({ withTimezone: true }).notNull(),
    status: text({ enum: ['pending', 'processed', 'quarantined'] })
      .notNull()
      .default('pending'),
    quarantineCode: text(),
    quarantineReason: text(),
    // The account's domain a `domain_not_verified` message waits for: verifying it re-queues the
    // message (docs/ingestion.md).
    quarantineDomain: text(),
    /** What the message held: report ids and kinds, duplicates acknowledged. */
    outcome: jsonb(),
    processedAt: timestamp({ withTimezone: true }),
  },
  (t) => [
    index().on(t.accountId, t.status, t.receivedAt),
    // The messages waiting for a domain's verification: small, read by the domain page, the
    // re-queue on verification and the worker's sweep (pg-domain-verification.ts).
    index('ingest_messages_waiting_index')
      .on(t.accountId, t.quarantineDomain)
      .where(sql`status = 'quarantined' and quarantine_code = 'domain_not_verified'`),
  ],
)

// A large message is stored in pieces of about a megabyte, written as it is copied in and read
// back one at a time, so neither the intake nor the worker ever holds it whole (docs/ingestion.md,
// "Memory"): a single bytea value travels as one hex string of twice its size.
export const ingestMessagePieces = pgTable(
  'ingest_message_pieces',
  {
    // Tenant data carries its account (tests/infrastructure/db/tenant-tables.test.ts).
    accountId: uuid().notNull(),
    messageId: uuid()
      .notNull()
      .references(() => ingestMessages.id, { onDelete: 'cascade' }),
    seq: integer().notNull(),
    bytes: bytea().notNull(),
  },
  (t) => [primaryKey({ columns: [t.messageId, t.seq] })],
)

export const aggregateReports = pgTable(
  'aggregate_reports',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    messageId: uuid().references(() => ingestMessages.id, { onDelete: 'set null' }),
    reporterOrg: text().notNull(),
    reporterEmail: text(),
    reportId: text().notNull(),
    policyDomain: text().notNull(),
    beginAt: timestamp({ withTimezone: true }).notNull(),
    endAt: timestamp({ withTimezone: true }).notNull(),
    contentHash: text().notNull(),
    variant: text().notNull(),
    policy: jsonb().notNull(),
    errors: jsonb().$type<string[]>().notNull(),
    recordCount: integer().notNull(),
    messageCount: bigint({ mode: 'number' }).notNull(),
    duplicatesSeen: integer().notNull().default(0),
    // When the report's message arrived (its ingest_messages.received_at: HTTP/CLI/SMTP intake time,
    // the IMAP server's INTERNALDATE), not when the job stored it (created_at); docs/ingestion.md.
    // Without a message (TLS-RPT over HTTPS) it is the time of storage.
    receivedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // A report accepted once is stored once (docs/ingestion.md); the same id over another range is another report.
    uniqueIndex('aggregate_reports_identity_key').on(
      t.accountId,
      sql`lower(${t.reporterOrg})`,
      t.reportId,
      t.policyDomain,
      t.beginAt,
      t.endAt,
    ),
    uniqueIndex('aggregate_reports_content_key').on(t.accountId, t.contentHash),
    // Migration 0013 adds INCLUDE (account_id, end_at, reporter_org, message_count), which
    // drizzle cannot express: the report list and the summaries' reporters read it alone.
    index().on(t.domainId, t.beginAt),
  ],
)

// The high-volume tables below carry no foreign keys on purpose: a 100,000-record report would pay
// a trigger per row (measured: ~0.3 s per table). Their rows are written only with their report in
// one transaction, and are deleted with it (infrastructure/repositories/pg-retention.ts).
//
// aggregate_records is PARTITION BY RANGE (day), one partition a month plus a DEFAULT one, which
// drizzle cannot express: migration 0010 is hand-edited, partitions are created ahead by the
// maintenance.partitions job and expired months are dropped whole
// (infrastructure/repositories/pg-partitions.ts, docs/operations.md). PostgreSQL requires every
// unique key of a partitioned table to include the partition key, hence the primary key (id, day).
export const aggregateRecords = pgTable(
  'aggregate_records',
  {
    id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    reportId: bigint({ mode: 'number' }).notNull(),
    accountId: uuid().notNull(),
    domainId: bigint({ mode: 'number' }).notNull(),
    day: date({ mode: 'string' }).notNull(),
    sourceIp: inet().notNull(),
    count: integer().notNull(),
    disposition: text().notNull(),
    dkimEvaluated: text(),
    spfEvaluated: text(),
    // json, not jsonb: kept as written and never queried by key in bulk, so the COPY of a large
    // report skips building binary JSON (measured: a large share of the insert time).
    reasons: json().notNull(),
    headerFrom: text().notNull(),
    envelopeFrom: text(),
    envelopeTo: text(),
    dkim: json().notNull(),
    spf: json().notNull(),
    dkimAligned: boolean().notNull(),
    spfAligned: boolean().notNull(),
    dmarcPass: boolean().notNull(),
  },
  // Only what the report detail needs: every extra index slows the COPY of large reports.
  (t) => [primaryKey({ columns: [t.id, t.day] }), index().on(t.reportId)],
)

// Summaries read these, never the raw records: one row per (domain, day, source IP, disposition,
// alignment outcome), maintained in the transaction that stores a report.
export const dailyRollups = pgTable(
  'daily_rollups',
  {
    accountId: uuid().notNull(),
    domainId: bigint({ mode: 'number' }).notNull(),
    day: date({ mode: 'string' }).notNull(),
    sourceIp: inet().notNull(),
    disposition: text().notNull(),
    dkimAligned: boolean().notNull(),
    spfAligned: boolean().notNull(),
    messages: bigint({ mode: 'number' }).notNull(),
    // What the sources view needs beyond alignment: raw passes (aligned or not), forwarding
    // overrides, and a few signing / SPF domains per row (capped at 8 when merged) as classification
    // evidence. Arrays on the row cost no index maintenance, unlike a table of (IP, domain) rows.
    spfPass: bigint({ mode: 'number' }).notNull().default(0),
    dkimPass: bigint({ mode: 'number' }).notNull().default(0),
    forwarded: bigint({ mode: 'number' }).notNull().default(0),
    dkimDomains: text().array().notNull().default(sql`'{}'::text[]`),
    spfDomains: text().array().notNull().default(sql`'{}'::text[]`),
    reports: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.domainId, t.day, t.sourceIp, t.disposition, t.dkimAligned, t.spfAligned] }),
    // Top failing sources: an index-only scan over the failing rows of a period.
    index('daily_rollups_failing_idx')
      .on(t.accountId, t.day, t.sourceIp, t.messages)
      .where(sql`not ${t.dkimAligned} and not ${t.spfAligned}`),
  ],
)

export const forensicReports = pgTable(
  'forensic_reports',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    messageId: uuid().references(() => ingestMessages.id, { onDelete: 'set null' }),
    contentHash: text().notNull(),
    arrivalAt: timestamp({ withTimezone: true }),
    sourceIp: inet(),
    reportedDomain: text(),
    authFailure: text(),
    deliveryResult: text(),
    redacted: boolean().notNull(),
    report: jsonb().notNull(),
    // When its message arrived, as for aggregate_reports.received_at.
    receivedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('forensic_reports_content_key').on(t.accountId, t.contentHash),
    index().on(t.domainId, t.createdAt),
  ],
)

export const tlsReports = pgTable(
  'tls_reports',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    messageId: uuid().references(() => ingestMessages.id, { onDelete: 'set null' }),
    organization: text().notNull(),
    reportId: text().notNull(),
    beginAt: timestamp({ withTimezone: true }).notNull(),
    endAt: timestamp({ withTimezone: true }).notNull(),
    successCount: bigint({ mode: 'number' }).notNull(),
    failureCount: bigint({ mode: 'number' }).notNull(),
    report: jsonb().notNull(),
    // When its message arrived, as for aggregate_reports.received_at.
    receivedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('tls_reports_identity_key').on(
      t.accountId,
      t.domainId,
      sql`lower(${t.organization})`,
      t.reportId,
    ),
    index().on(t.domainId, t.beginAt),
  ],
)

// Public DNS facts about sending IPs, shared by all accounts (not tenant data): filled by the
// enrichment job, never by the parser.
export const sourceIps = pgTable('source_ips', {
  ip: inet().primaryKey(),
  ptr: text(),
  ptrStatus: text({ enum: ['ok', 'none', 'error'] }).notNull(),
  checkedAt: timestamp({ withTimezone: true }).notNull(),
})

// DKIM selectors seen signing a domain's mail in its reports; the posture checks try them.
export const dkimSelectorsSeen = pgTable(
  'dkim_selectors_seen',
  {
    domainId: bigint({ mode: 'number' })
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    selector: text().notNull(),
    signingDomain: text().notNull(),
    lastSeen: date({ mode: 'string' }).notNull(),
    messages: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.domainId, t.selector, t.signingDomain] })],
)

export const accountSettings = pgTable('account_settings', {
  accountId: uuid()
    .primaryKey()
    .references(() => accounts.id, { onDelete: 'cascade' }),
  /** Failure reports keep local parts of addresses only when the account opts out of redaction. */
  redactForensic: boolean().notNull().default(true),
  rawRetentionDays: integer().notNull().default(30),
  recordRetentionDays: integer().notNull().default(400),
  forensicRetentionDays: integer().notNull().default(90),
})

// One row per domain and day: the overview's totals, rates and daily series read this, so their
// cost does not grow with the number of source IPs.
export const dailyDomainTotals = pgTable(
  'daily_domain_totals',
  {
    accountId: uuid().notNull(),
    domainId: bigint({ mode: 'number' }).notNull(),
    day: date({ mode: 'string' }).notNull(),
    messages: bigint({ mode: 'number' }).notNull(),
    dmarcPass: bigint({ mode: 'number' }).notNull(),
    dkimAligned: bigint({ mode: 'number' }).notNull(),
    spfAligned: bigint({ mode: 'number' }).notNull(),
    dispositionNone: bigint({ mode: 'number' }).notNull(),
    dispositionQuarantine: bigint({ mode: 'number' }).notNull(),
    dispositionReject: bigint({ mode: 'number' }).notNull(),
    dispositionOther: bigint({ mode: 'number' }).notNull(),
    reports: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.domainId, t.day] }), index().on(t.accountId, t.day)],
)

// Failing volume (neither DKIM nor SPF aligned) per account, ISO week and source IP: the overview's
// top failing sources read whole weeks here and only the partial weeks at a period's edges from the
// daily rollups, so a 90-day overview groups weeks, not every day's rows.
export const weeklyFailingSources = pgTable(
  'weekly_failing_sources',
  {
    accountId: uuid().notNull(),
    domainId: bigint({ mode: 'number' }).notNull(),
    /** The Monday of the ISO week. */
    week: date({ mode: 'string' }).notNull(),
    sourceIp: inet().notNull(),
    failing: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.week, t.domainId, t.sourceIp] })],
)
