import { and, asc, count, eq, isNull } from 'drizzle-orm'
import type { EmbedKeyStore } from '../../domain/embed/embed-key.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import type { Db } from '../db/database.ts'
import { embedKeys } from '../db/schema/embed.ts'

const columns = {
  id: embedKeys.id,
  key: embedKeys.key,
  name: embedKeys.name,
  allowedOrigins: embedKeys.allowedOrigins,
  createdAt: embedKeys.createdAt,
}

export function pgEmbedKeyStore(db: Db): EmbedKeyStore {
  return {
    list(accountId) {
      return db
        .select(columns)
        .from(embedKeys)
        .where(and(eq(embedKeys.accountId, accountId), isNull(embedKeys.revokedAt)))
        .orderBy(asc(embedKeys.createdAt))
    },
    async page(accountId, page) {
      const where = and(eq(embedKeys.accountId, accountId), isNull(embedKeys.revokedAt))
      const [rows, totals] = await Promise.all([
        db
          .select(columns)
          .from(embedKeys)
          .where(where)
          .orderBy(asc(embedKeys.createdAt), asc(embedKeys.id))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ total: count() }).from(embedKeys).where(where),
      ])
      return { items: rows, total: totals[0]?.total ?? 0 }
    },
    async insert(accountId, key) {
      const rows = await db
        .insert(embedKeys)
        .values({ accountId, ...key })
        .returning(columns)
      return rows[0]!
    },
    async revoke(accountId, id, at) {
      // A malformed id cannot name a key; answering "not found" avoids a database type error.
      if (!isUuid(id)) return false
      const rows = await db
        .update(embedKeys)
        .set({ revokedAt: at })
        .where(and(eq(embedKeys.accountId, accountId), eq(embedKeys.id, id), isNull(embedKeys.revokedAt)))
        .returning({ id: embedKeys.id })
      return rows.length > 0
    },
    async findLive(key) {
      const rows = await db
        .select({ ...columns, accountId: embedKeys.accountId })
        .from(embedKeys)
        .where(and(eq(embedKeys.key, key), isNull(embedKeys.revokedAt)))
      return rows[0] ?? null
    },
  }
}
