import { and, asc, count, desc, eq, sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { ProviderKind, ProviderSettings } from '../../domain/dns-providers/credentials.ts'
import type { DomainImport, ImportResult, ImportStore } from '../../domain/dns-providers/imports.ts'
import type { Connection, ConnectionStore } from '../../domain/dns-providers/use-cases.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import type { SecretBox } from '../crypto/secret-box.ts'
import type { Db } from '../db/database.ts'
import { dnsProviderConnections, dnsProviderImports } from '../db/schema/dns-providers.ts'
import { IMPORT_DOMAINS, send } from '../queue/catalogue.ts'

// DNS provider connections and domain imports (issue #7). Every read and write of a connection is
// scoped by account. The secret is sealed with the context `dns-provider:<connection id>`, so a
// sealed value copied into another row does not open there; it leaves this module only through
// `secretOf`, for the adapter registry, and never in a Connection.

export const credentialsContext = (connectionId: string) => `dns-provider:${connectionId}`

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
type ConnectionRow = typeof dnsProviderConnections.$inferSelect

function toConnection(row: ConnectionRow): Connection {
  const provider = row.provider as ProviderKind
  return {
    id: row.id,
    accountId: row.accountId,
    provider,
    name: row.name,
    settings: { ...(row.settings as object), provider } as ProviderSettings,
    providerAccount: row.providerAccount,
    createdAt: row.createdAt,
    lastVerifiedAt: row.lastVerifiedAt,
  }
}

export function pgConnectionStore(db: Db, deps: { secrets: SecretBox }) {
  const byId = (accountId: string, id: string) =>
    and(eq(dnsProviderConnections.accountId, accountId), eq(dnsProviderConnections.id, id))
  const store = {
    async insert(accountId, input) {
      const id = crypto.randomUUID()
      const { provider, ...settings } = input.settings
      const [row] = await db
        .insert(dnsProviderConnections)
        .values({
          id,
          accountId,
          provider,
          name: input.name,
          settings,
          credentialsSealed: await deps.secrets.seal(input.secret, credentialsContext(id)),
          providerAccount: input.providerAccount,
          createdAt: input.now,
          lastVerifiedAt: input.now,
        })
        .returning()
      return toConnection(row!)
    },

    async list(accountId, page) {
      const where = eq(dnsProviderConnections.accountId, accountId)
      const [rows, [total]] = await Promise.all([
        db
          .select()
          .from(dnsProviderConnections)
          .where(where)
          .orderBy(asc(dnsProviderConnections.createdAt), asc(dnsProviderConnections.id))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ n: count() }).from(dnsProviderConnections).where(where),
      ])
      return { items: rows.map(toConnection), total: total?.n ?? 0 }
    },

    async all(accountId) {
      const rows = await db
        .select()
        .from(dnsProviderConnections)
        .where(eq(dnsProviderConnections.accountId, accountId))
        .orderBy(asc(dnsProviderConnections.createdAt), asc(dnsProviderConnections.id))
      return rows.map(toConnection)
    },

    async get(accountId, id) {
      if (!isUuid(id)) return null
      const rows = await db.select().from(dnsProviderConnections).where(byId(accountId, id))
      return rows[0] === undefined ? null : toConnection(rows[0])
    },

    async remove(accountId, id) {
      if (!isUuid(id)) return false
      const rows = await db
        .delete(dnsProviderConnections)
        .where(byId(accountId, id))
        .returning({ id: dnsProviderConnections.id })
      return rows.length > 0
    },
  } satisfies ConnectionStore
  return {
    ...store,
    /** The opened secret of a connection of the account (for the adapter registry only). */
    async secretOf(accountId: string, id: string): Promise<string | null> {
      const rows = await db
        .select({ sealed: dnsProviderConnections.credentialsSealed })
        .from(dnsProviderConnections)
        .where(byId(accountId, id))
      const sealed = rows[0]?.sealed
      return sealed === undefined ? null : deps.secrets.open(sealed, credentialsContext(id))
    },
  }
}

export type PgConnectionStore = ReturnType<typeof pgConnectionStore>

const importColumns = {
  row: dnsProviderImports,
  provider: dnsProviderConnections.provider,
}

function toImport(row: { row: typeof dnsProviderImports.$inferSelect; provider: string }): DomainImport {
  const r = row.row
  return {
    id: r.id,
    accountId: r.accountId,
    connectionId: r.connectionId,
    provider: row.provider as ProviderKind,
    status: r.status as DomainImport['status'],
    zonesRequested: r.zonesRequested ?? null,
    results: r.results as ImportResult[],
    total: r.total,
    imported: r.imported,
    skipped: r.skipped,
    failed: r.failed,
    error: r.error,
    createdAt: r.createdAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
  }
}

/**
 * Imports; `create` enqueues the import's job in the same transaction as its row (so there is never
 * a queued import without a job, nor a job without its import), which needs the job queue.
 */
export function pgImportStore(db: Db, deps: { boss?: PgBoss | null } = {}): ImportStore {
  const select = (where: ReturnType<typeof and>) =>
    db
      .select(importColumns)
      .from(dnsProviderImports)
      .innerJoin(dnsProviderConnections, eq(dnsProviderConnections.id, dnsProviderImports.connectionId))
      .where(where)
      .orderBy(desc(dnsProviderImports.createdAt))
  return {
    async create(accountId, input) {
      const boss = deps.boss
      if (!boss) throw new Error('domain imports need the job queue (pg-boss) in this process')
      const id = await db.transaction(async (tx: Tx) => {
        const [row] = await tx
          .insert(dnsProviderImports)
          .values({
            accountId,
            connectionId: input.connectionId,
            status: 'queued',
            zonesRequested: input.zones,
            createdAt: input.now,
          })
          .returning({ id: dnsProviderImports.id })
        await send(
          boss,
          IMPORT_DOMAINS,
          { importId: row!.id },
          {
            singletonKey: row!.id,
            db: fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql),
          },
        )
        return row!.id
      })
      return (await this.get(accountId, id))!
    },

    async get(accountId, id) {
      if (!isUuid(id)) return null
      const rows = await select(
        and(eq(dnsProviderImports.accountId, accountId), eq(dnsProviderImports.id, id)),
      )
      return rows[0] === undefined ? null : toImport(rows[0])
    },

    async load(id) {
      if (!isUuid(id)) return null
      const rows = await select(and(eq(dnsProviderImports.id, id)))
      return rows[0] === undefined ? null : toImport(rows[0])
    },

    async start(id, total, at) {
      await db
        .update(dnsProviderImports)
        .set({
          status: 'running',
          total,
          startedAt: sql`coalesce(${dnsProviderImports.startedAt}, ${at.toISOString()}::timestamptz)`,
        })
        .where(eq(dnsProviderImports.id, id))
    },

    async record(id, result) {
      const counter = { imported: 'imported', skipped: 'skipped', failed: 'failed' } as const
      const column = dnsProviderImports[counter[result.status]]
      await db
        .update(dnsProviderImports)
        .set({
          results: sql`${dnsProviderImports.results} || ${JSON.stringify([result])}::jsonb`,
          [counter[result.status]]: sql`${column} + 1`,
        })
        .where(eq(dnsProviderImports.id, id))
    },

    async finish(id, status, error, at) {
      await db
        .update(dnsProviderImports)
        .set({ status, error, finishedAt: at })
        .where(eq(dnsProviderImports.id, id))
    },
  }
}
