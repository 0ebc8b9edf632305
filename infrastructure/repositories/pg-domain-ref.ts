import { and, eq } from 'drizzle-orm'
import type { AutomationLevel } from '../../domain/domains/domain.ts'
import type { Db } from '../db/database.ts'
import { domains } from '../db/schema/domains.ts'

/** What the write paths (SPF management, hosted DMARC) need of a domain of the account, by name. */
export interface DomainRef {
  id: number
  name: string
  verified: boolean
  automationLevel: AutomationLevel
}

export async function domainRef(db: Db, accountId: string, name: string): Promise<DomainRef | null> {
  const rows = await db
    .select({
      id: domains.id,
      name: domains.name,
      verifiedAt: domains.verifiedAt,
      automationLevel: domains.automationLevel,
    })
    .from(domains)
    .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
    .limit(1)
  const row = rows[0]
  if (row === undefined) return null
  const automationLevel = row.automationLevel as AutomationLevel
  return { id: row.id, name: row.name, verified: row.verifiedAt !== null, automationLevel }
}
