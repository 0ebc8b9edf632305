import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { TokenRecord, TokenStore } from '../../domain/accounts/ports.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { apiTokens } from '../db/schema/accounts.ts'

const columns = {
  id: apiTokens.id,
  accountId: apiTokens.accountId,
  userId: apiTokens.userId,
  name: apiTokens.name,
  hint: apiTokens.hint,
  expiresAt: apiTokens.expiresAt,
  revokedAt: apiTokens.revokedAt,
  lastUsedAt: apiTokens.lastUsedAt,
  createdAt: apiTokens.createdAt,
}

interface RawToken {
  id: string
  account_id: string
  user_id: string
  name: string
  hint: string
  expires_at: Date | string | null
  revoked_at: Date | string | null
  last_used_at: Date | string | null
  created_at: Date | string
}

const toDate = (value: Date | string | null): Date | null =>
  value === null ? null : value instanceof Date ? value : new Date(value)

// How stale `last_used_at` may be: recording it at most once a minute keeps the hot path read-only.
const TOUCH_INTERVAL = sql`interval '60 seconds'`

export function pgTokenStore(db: Db): TokenStore {
  return {
    async findForAuth(hash, date) {
      // Drizzle's postgres.js setup passes timestamps as text; raw SQL must do the same.
      const now = date.toISOString()
      // One round trip: read the token and, only if it is live and its stamp is stale, touch it.
      const result = await db.execute(sql`
        with t as (
          select id, account_id, user_id, name, hint, expires_at, revoked_at, last_used_at, created_at
          from ${apiTokens} where token_hash = ${hash}
        ), touched as (
          update ${apiTokens} set last_used_at = ${now}
          from t
          where ${apiTokens.id} = t.id
            and t.revoked_at is null
            and (t.expires_at is null or t.expires_at > ${now}::timestamptz)
            and (t.last_used_at is null or t.last_used_at < ${now}::timestamptz - ${TOUCH_INTERVAL})
          returning 1
        )
        select t.*, (select count(*) from touched)::int as touched from t`)
      const row = rowsOf<RawToken>(result)[0]
      if (row === undefined) return null
      return {
        id: row.id,
        accountId: row.account_id,
        userId: row.user_id,
        name: row.name,
        hint: row.hint,
        expiresAt: toDate(row.expires_at),
        revokedAt: toDate(row.revoked_at),
        lastUsedAt: toDate(row.last_used_at),
        createdAt: toDate(row.created_at)!,
      }
    },

    async insert(token) {
      const rows = await db
        .insert(apiTokens)
        .values({
          accountId: token.accountId,
          userId: token.userId,
          name: token.name,
          tokenHash: token.hash,
          hint: token.hint,
          expiresAt: token.expiresAt,
        })
        .returning(columns)
      return rows[0]!
    },

    async revoke(accountId, tokenId, now) {
      // A malformed id cannot name a token; answering "not found" avoids a database type error.
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tokenId)) return null
      // Idempotent: a second revoke keeps the first revocation time.
      await db
        .update(apiTokens)
        .set({ revokedAt: now })
        .where(
          and(eq(apiTokens.accountId, accountId), eq(apiTokens.id, tokenId), isNull(apiTokens.revokedAt)),
        )
      const rows = await db
        .select(columns)
        .from(apiTokens)
        .where(and(eq(apiTokens.accountId, accountId), eq(apiTokens.id, tokenId)))
      return (rows[0] as TokenRecord | undefined) ?? null
    },

    async list(accountId) {
      return db
        .select(columns)
        .from(apiTokens)
        .where(eq(apiTokens.accountId, accountId))
        .orderBy(desc(apiTokens.createdAt))
    },

    async findByHash(hash) {
      const rows = await db.select(columns).from(apiTokens).where(eq(apiTokens.tokenHash, hash))
      return rows[0] ?? null
    },
  }
}
