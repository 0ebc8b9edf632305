import { and, count, eq, inArray, sql } from 'drizzle-orm'
import type { DemoStore } from '../../domain/demo/demo-use-cases.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { domains } from '../db/schema/domains.ts'
import { ingestMessages } from '../db/schema/reports.ts'

// The demo domain (docs/demo.md). It is added verified without a domain.verified event: nobody
// proved anything, and a user's webhook should not hear of a domain they never published.
// Removing it deletes what hangs off the domain: most tables cascade from `domains`; the report
// figures that are partitioned or written in bulk carry the id without a foreign key
// (infrastructure/db/schema/reports.ts), so they are deleted by hand in the same transaction.

const UNREFERENCED = [
  'daily_rollups',
  'daily_domain_totals',
  'weekly_failing_sources',
  'monthly_failing_sources',
  'monthly_reporter_counts',
]

export function pgDemoStore(db: Db): DemoStore {
  return {
    async addVerified(accountId, name, now) {
      const token = crypto.randomUUID().replaceAll('-', '')
      try {
        await db.insert(domains).values({ accountId, name, verificationToken: token, verifiedAt: now })
        return true
      } catch (error) {
        if (isUniqueViolation(error, 'domains_account_name_key')) return false
        throw error
      }
    },

    async remove(accountId, name) {
      return db.transaction(async (tx) => {
        const [row] = await tx
          .select({ id: domains.id })
          .from(domains)
          .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
          .for('update')
        if (row === undefined) return false
        // Records are found through their reports (their only index is report_id).
        await tx.execute(
          sql`delete from aggregate_records where report_id in (select id from aggregate_reports where domain_id = ${row.id})`,
        )
        // A large report's rollup rows not merged yet (aggregate-report-merge.ts).
        await tx.execute(
          sql`delete from rollup_pending where report_id in (select id from aggregate_reports where domain_id = ${row.id})`,
        )
        for (const table of UNREFERENCED)
          await tx.execute(
            sql`delete from ${sql.identifier(table)} where account_id = ${accountId} and domain_id = ${row.id}`,
          )
        await tx.delete(domains).where(eq(domains.id, row.id))
        return true
      })
    },
  }
}

/** How many of the demo's messages still wait for the report job (the command waits for a worker). */
export async function pendingDemoMessages(db: Db, ids: string[]): Promise<number> {
  const [row] = await db
    .select({ pending: count() })
    .from(ingestMessages)
    .where(and(inArray(ingestMessages.id, ids), eq(ingestMessages.status, 'pending')))
  return row?.pending ?? 0
}

/** How many of the account's report messages wait for the report job (the demo's among them). */
export async function pendingAccountMessages(db: Db, accountId: string): Promise<number> {
  const [row] = await db
    .select({ pending: count() })
    .from(ingestMessages)
    .where(and(eq(ingestMessages.accountId, accountId), eq(ingestMessages.status, 'pending')))
  return row?.pending ?? 0
}
