import { index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { accounts, users } from './accounts.ts'

// Dashboard sessions (docs/dashboard.md). The cookie carries an opaque random id; only its SHA-256 is
// stored, so a copy of this table cannot be replayed as cookies.
export const sessions = pgTable(
  'sessions',
  {
    idHash: text().primaryKey(),
    userId: uuid()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    // The synchronizer token the session's forms carry. Not a credential on its own: it is only
    // accepted together with the session cookie, so it is kept as it is (pages must render it).
    csrfToken: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    lastSeenAt: timestamp({ withTimezone: true }).notNull(),
    // last_seen_at + 30 days: sliding, moved forward when the session is used.
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    userAgent: text(),
    ip: text(),
  },
  (t) => [index().on(t.userId), index().on(t.expiresAt)],
)

// Password reset links: the token is in the emailed link only; its SHA-256 is the key. Single use
// (used_at) and short-lived (expires_at, one hour).
export const passwordResets = pgTable(
  'password_resets',
  {
    tokenHash: text().primaryKey(),
    userId: uuid()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    usedAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.userId), index().on(t.expiresAt)],
)

// OAuth / OpenID Connect sign-in (issue #8): one row per (provider, subject) linked to a user. A
// provider identity is linked to an existing user only through an email the provider says is
// verified; the subject, not the email, is what later logins match.
export const oauthIdentities = pgTable(
  'oauth_identities',
  {
    provider: text().notNull(),
    subject: text().notNull(),
    userId: uuid()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    lastLoginAt: timestamp({ withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.provider, t.subject] }), index().on(t.userId)],
)

// One-time sign-in links (`bun run cli account create` without a password, `account login-link`):
// the token is in the printed link only; its SHA-256 is the key. Single use, 24 hours; a new link
// voids the user's older unused ones.
export const loginLinks = pgTable(
  'login_links',
  {
    tokenHash: text().primaryKey(),
    userId: uuid()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    usedAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.userId)],
)
