import { and, count, desc, eq } from 'drizzle-orm'
import type { ProviderKind } from '../../domain/dns-providers/credentials.ts'
import type { RecordSet } from '../../domain/dns-providers/ports.ts'
import type { ProviderWrite, WriteStore } from '../../domain/dns-providers/writes.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import { isUuid } from '../../domain/shared/uuid.ts'
import type { Db } from '../db/database.ts'
import { dnsProviderWrites } from '../db/schema/dns-providers.ts'
import { domains } from '../db/schema/domains.ts'
import { auditLog } from '../db/schema/spf.ts'

// The log of writes through DNS providers (issue #7), scoped by account. A change of state and its
// audit_log row are one transaction: an applied write or a rollback is never left unaudited.

type Row = typeof dnsProviderWrites.$inferSelect

function toWrite(row: Row): ProviderWrite {
  return {
    id: row.id,
    accountId: row.accountId,
    domain: row.domainName,
    connectionId: row.connectionId,
    provider: row.provider as ProviderKind,
    zone: { id: row.zoneId, name: row.zone },
    name: row.name,
    type: row.type,
    before: (row.before as RecordSet | null) ?? null,
    after: row.after as RecordSet,
    status: row.status as ProviderWrite['status'],
    error: row.error,
    actor: row.actor,
    createdAt: row.createdAt,
    appliedAt: row.appliedAt,
    verifiedAt: row.verifiedAt,
    rolledBackAt: row.rolledBackAt,
  }
}

export function pgWriteStore(db: Db): WriteStore {
  const byId = (accountId: string, id: string) =>
    and(eq(dnsProviderWrites.accountId, accountId), eq(dnsProviderWrites.id, id))
  return {
    async insert(write) {
      const [domain] = await db
        .select({ id: domains.id })
        .from(domains)
        .where(and(eq(domains.accountId, write.accountId), eq(domains.name, write.domain)))
      const [row] = await db
        .insert(dnsProviderWrites)
        .values({
          accountId: write.accountId,
          domainId: domain?.id ?? null,
          domainName: write.domain,
          connectionId: write.connectionId,
          provider: write.provider,
          zone: write.zone.name,
          zoneId: write.zone.id,
          name: write.name,
          type: write.type,
          before: write.before,
          after: write.after,
          status: 'planned',
          actor: write.actor,
          createdAt: write.createdAt,
        })
        .returning()
      return toWrite(row!)
    },

    async change(accountId, id, change, audit) {
      return db.transaction(async (tx) => {
        const [row] = await tx.update(dnsProviderWrites).set(change).where(byId(accountId, id)).returning()
        if (row === undefined) throw new Error(`no DNS provider write ${id} in account ${accountId}`)
        if (audit !== undefined)
          await tx.insert(auditLog).values({
            accountId,
            domainId: row.domainId,
            actor: audit.actor,
            action: audit.action,
            before:
              audit.before === null ? null : { provider: row.provider, zone: row.zone, set: audit.before },
            after: audit.after === null ? null : { provider: row.provider, zone: row.zone, set: audit.after },
            reason: audit.reason,
            createdAt: audit.at,
          })
        return toWrite(row)
      })
    },

    async get(accountId, id) {
      if (!isUuid(id)) return null
      const rows = await db.select().from(dnsProviderWrites).where(byId(accountId, id))
      return rows[0] === undefined ? null : toWrite(rows[0])
    },

    async list(accountId, page) {
      const where = eq(dnsProviderWrites.accountId, accountId)
      const [rows, [total]] = await Promise.all([
        db
          .select()
          .from(dnsProviderWrites)
          .where(where)
          .orderBy(desc(dnsProviderWrites.createdAt), desc(dnsProviderWrites.id))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ n: count() }).from(dnsProviderWrites).where(where),
      ])
      return { items: rows.map(toWrite), total: total?.n ?? 0 }
    },
  }
}
