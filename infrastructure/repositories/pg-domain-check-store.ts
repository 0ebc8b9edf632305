import { and, asc, desc, eq, isNull, lt, or } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import type { DomainCheckStore, StoredCheck } from '../../domain/posture/check-domain.ts'
import type { Posture, PostureFindings } from '../../domain/posture/posture.ts'
import { withDamageMarked } from '../db/damaged-text.ts'
import type { Db } from '../db/database.ts'
import { domains } from '../db/schema/domains.ts'
import { domainChecks } from '../db/schema/posture.ts'
import { enqueuePostureAlerts } from '../queue/alert-triggers.ts'
import { onTransaction } from './pg-ingest-message-store.ts'

/**
 * Checks, stored by the API (GET /domains/{name}/status) and the posture jobs alike. With the
 * process's queue, storing a check enqueues its domain's alert evaluation in the same transaction
 * (docs/alerts.md, "Storage, jobs and API"); without one (the CLI) the scheduler finds the check.
 */
export function pgDomainCheckStore(db: Db, boss: PgBoss | null = null): DomainCheckStore {
  return {
    async latest(accountId, name) {
      const rows = await db
        .select({
          checkedAt: domainChecks.checkedAt,
          freshUntil: domainChecks.freshUntil,
          posture: domainChecks.posture,
          findings: domainChecks.findings,
        })
        .from(domainChecks)
        .innerJoin(domains, eq(domains.id, domainChecks.domainId))
        .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
        .orderBy(desc(domainChecks.checkedAt), desc(domainChecks.id))
        .limit(1)
      const row = rows[0]
      if (row === undefined) return null
      return {
        ...row,
        posture: row.posture as Posture,
        findings: row.findings as PostureFindings,
      } satisfies StoredCheck
    },

    async save(accountId, name, check) {
      await db.transaction(async (tx) => {
        const areas = check.posture.areas
        const updated = await tx
          .update(domains)
          .set({
            dmarcPolicy: check.posture.dmarcPolicy,
            status: {
              dmarc: areas.dmarc.status,
              spf: areas.spf.status,
              dkim: areas.dkim.status,
              grade: check.posture.grade,
            },
            checkedAt: check.checkedAt,
          })
          .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
          .returning({ id: domains.id })
        const domainId = updated[0]?.id
        if (domainId === undefined) return
        await tx.insert(domainChecks).values({
          accountId,
          domainId,
          checkedAt: check.checkedAt,
          freshUntil: check.freshUntil,
          grade: check.posture.grade,
          // DNS text of any domain the check read (a record, an include's): a NUL or a lone
          // surrogate in it failed the insert, and the status page with it (damaged-text.ts).
          posture: withDamageMarked(check.posture),
          findings: withDamageMarked(check.findings),
        })
        if (boss !== null) await enqueuePostureAlerts(boss, onTransaction(tx), { accountId, domainId })
      })
    },

    async due(before, limit) {
      return db
        .select({ accountId: domains.accountId, name: domains.name })
        .from(domains)
        .where(or(isNull(domains.checkedAt), lt(domains.checkedAt, before)))
        .orderBy(asc(domains.checkedAt))
        .limit(limit)
    },
  }
}
