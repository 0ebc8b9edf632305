import { and, asc, count, eq, sql } from 'drizzle-orm'
import type { OrganizationLookup } from '../../domain/domains/ports.ts'
import type { Organization, OrganizationStore } from '../../domain/organizations/organization.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { organizations } from '../db/schema/domains.ts'

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
  const get = async (accountId: string, id: number): Promise<Organization | null> => {
    const rows = await db
      .select(columns)
      .from(organizations)
      .where(and(eq(organizations.accountId, accountId), eq(organizations.id, id)))
    return rows[0] ?? null
  }
  return {
    get,
    async exists(accountId, id) {
      const rows = await db
        .select({ id: organizations.id })
        .from(organizations)
        .where(and(eq(organizations.accountId, accountId), eq(organizations.id, id)))
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
  }
}
