import { and, asc, count, eq, sql } from 'drizzle-orm'
import type { OrganizationLookup } from '../../domain/domains/ports.ts'
import type { Organization, OrganizationStore } from '../../domain/organizations/organization.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { domains, organizations } from '../db/schema/domains.ts'

export function pgOrganizationStore(db: Db): OrganizationStore & OrganizationLookup {
  // The domain count is a correlated sub-select, scoped by account like the row itself. Written out in
  // full because Drizzle renders a column of the outer table unqualified inside a sub-select.
  const domainCount = sql<number>`(select count(*)::int from domains d where d.organization_id = organizations.id and d.account_id = organizations.account_id)`
  const columns = {
    id: organizations.id,
    name: organizations.name,
    createdAt: organizations.createdAt,
    domainCount,
  }
  const byId = (accountId: string, id: number) =>
    and(eq(organizations.accountId, accountId), eq(organizations.id, id))
  const get = async (accountId: string, id: number): Promise<Organization | null> => {
    const rows = await db.select(columns).from(organizations).where(byId(accountId, id))
    return rows[0] ?? null
  }
  return {
    get,
    async exists(accountId, id) {
      const rows = await db.select({ id: organizations.id }).from(organizations).where(byId(accountId, id))
      return rows.length > 0
    },
    async list(accountId, page) {
      const where = eq(organizations.accountId, accountId)
      const [rows, totals] = await Promise.all([
        db
          .select(columns)
          .from(organizations)
          .where(where)
          .orderBy(asc(organizations.name), asc(organizations.id))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ total: count() }).from(organizations).where(where),
      ])
      return { items: rows, total: totals[0]?.total ?? 0 }
    },
    async insert(accountId, name) {
      try {
        const rows = await db.insert(organizations).values({ accountId, name }).returning()
        const row = rows[0]!
        return { id: row.id, name: row.name, createdAt: row.createdAt, domainCount: 0 }
      } catch (error) {
        if (isUniqueViolation(error, 'organizations_account_name_key')) return 'duplicate'
        throw error
      }
    },
    async rename(accountId, id, name) {
      try {
        const rows = await db
          .update(organizations)
          .set({ name })
          .where(byId(accountId, id))
          .returning(columns)
        return rows[0] ?? null
      } catch (error) {
        if (isUniqueViolation(error, 'organizations_account_name_key')) return 'duplicate'
        throw error
      }
    },
    async delete(accountId, id) {
      return db.transaction(async (tx) => {
        // Locked first: a domain joining it meanwhile waits on this lock (its foreign key check) and
        // then finds it gone, instead of this delete failing on a domain it never saw.
        const locked = await tx
          .select({ id: organizations.id })
          .from(organizations)
          .where(byId(accountId, id))
          .for('update')
        if (locked.length === 0) return null
        // The composite foreign key (organization_id, account_id) cannot SET NULL on delete: that
        // would null account_id too, so the domains are taken out explicitly.
        const ungrouped = await tx
          .update(domains)
          .set({ organizationId: null })
          .where(and(eq(domains.accountId, accountId), eq(domains.organizationId, id)))
          .returning({ id: domains.id })
        await tx.delete(organizations).where(byId(accountId, id))
        return { ungrouped: ungrouped.length }
      })
    },
  }
}
