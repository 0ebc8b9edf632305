import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { accounts, users } from './accounts.ts'

// Invitations to join an account (issue #8). The token is in the mailed link only; its SHA-256 is
// kept. Single use (accepted_at), revocable (revoked_at), valid for 7 days (expires_at). Rows stay
// after use as a record of who invited whom.
export const invitations = pgTable(
  'invitations',
  {
    id: uuid().primaryKey().defaultRandom(),
    accountId: uuid()
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    // Normalised to lower case; compared with the accepting user's email.
    email: text().notNull(),
    role: text({ enum: ['owner', 'member'] }).notNull(),
    tokenHash: text().notNull().unique(),
    invitedBy: uuid().references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    acceptedAt: timestamp({ withTimezone: true }),
    acceptedBy: uuid().references(() => users.id, { onDelete: 'set null' }),
    revokedAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.accountId, t.email)],
)
