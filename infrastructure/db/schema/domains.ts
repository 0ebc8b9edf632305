import { sql } from 'drizzle-orm'
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
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { accounts } from './accounts.ts'

export const organizations = pgTable(
  'organizations',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('organizations_account_name_key').on(t.accountId, sql`lower(${t.name})`),
    // Target of the composite foreign key below: a domain can only join an organization of its own account.
    unique('organizations_id_account_key').on(t.id, t.accountId),
  ],
)

export const domains = pgTable(
  'domains',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    automationLevel: text({ enum: ['manual', 'assisted', 'automatic'] })
      .notNull()
      .default('manual'),
    organizationId: integer(),
    verificationToken: text().notNull(),
    // DKIM selectors the owner asked us to check, beside learned and common ones.
    dkimSelectors: jsonb().$type<string[]>().notNull().default([]),
    verifiedAt: timestamp({ withTimezone: true }),
    // How ownership was proven (docs/api.md, verify): the TXT record, the DMARC record's rua or ruf
    // naming the account's report address, or the operator's word (CLI --without-dns, with a reason).
    verifiedBy: text({ enum: ['dns_txt', 'dmarc_rua', 'dmarc_ruf', 'operator'] }),
    verifiedReason: text(),
    dmarcPolicy: text({ enum: ['none', 'quarantine', 'reject', 'missing'] }),
    // Per-area status and grade written by the posture checks; null until the first check.
    status: jsonb().$type<{ dmarc: string; spf: string; dkim: string; grade: string | null }>(),
    checkedAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('domains_account_name_key').on(t.accountId, t.name),
    index().on(t.name),
    foreignKey({
      name: 'domains_organization_fk',
      columns: [t.organizationId, t.accountId],
      foreignColumns: [organizations.id, organizations.accountId],
    }),
  ],
)
