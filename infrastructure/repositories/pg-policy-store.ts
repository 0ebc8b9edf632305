import { and, asc, desc, eq, exists, gt, isNotNull, ne, or } from 'drizzle-orm'
import type { DmarcPolicy } from '../../domain/dmarc/record.ts'
import type { AppliedChange, PolicyChange, PolicyStore } from '../../domain/policy/ports.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { dnsProviderConnections } from '../db/schema/dns-providers.ts'
import { domains } from '../db/schema/domains.ts'
import { policyChanges } from '../db/schema/policy.ts'
import { hostedRecords } from '../db/schema/spf.ts'
import { auditDmarc, pgDmarcHosting, replaceHostedDmarc } from './pg-dmarc-hosting.ts'
import { appendEvent } from './pg-event-outbox.ts'

// The history of hosted DMARC policies and the proposals of `assisted` domains (issue #6). Reads
// filter by account; a change is applied in one transaction with the hosted record it rewrites,
// its audit entry and its `dmarc.progressed` event (the outbox), so the responder never serves a
// policy the history does not know and no event is sent for a change that rolled back.

/** The record changed since the decision (optimistic concurrency, like SPF versions). */
class Conflict extends Error {}

const toChange = (row: typeof policyChanges.$inferSelect): PolicyChange => ({
  id: row.id,
  kind: row.kind,
  status: row.status,
  from: { policy: row.fromPolicy as DmarcPolicy, pct: row.fromPct },
  to: { policy: row.toPolicy as DmarcPolicy, pct: row.toPct },
  fromRecord: row.fromRecord,
  toRecord: row.toRecord,
  reason: row.reason,
  actor: row.actor,
  createdAt: row.createdAt,
  appliedAt: row.appliedAt,
  rolledBackAt: row.rolledBackAt,
})

const AUDIT_ACTIONS = { advance: 'dmarc.progress', rollback: 'dmarc.rollback' } as const

export function pgPolicyStore(db: Db, options: { zone: string }): PolicyStore {
  const hosting = pgDmarcHosting(db, options)
  const ofDomain = (accountId: string, domainId: number) =>
    and(eq(policyChanges.accountId, accountId), eq(policyChanges.domainId, domainId))
  const waiting = (accountId: string, domainId: number) =>
    and(ofDomain(accountId, domainId), eq(policyChanges.status, 'proposed'))

  async function pending(accountId: string, domainId: number): Promise<PolicyChange | null> {
    const rows = await db.select().from(policyChanges).where(waiting(accountId, domainId)).limit(1)
    return rows[0] === undefined ? null : toChange(rows[0])
  }

  return {
    domain: hosting.domain,
    hosted: hosting.get,

    async domainById(accountId, domainId) {
      const rows = await db
        .select({ name: domains.name })
        .from(domains)
        .where(and(eq(domains.id, domainId), eq(domains.accountId, accountId)))
      return rows[0] === undefined ? null : hosting.domain(accountId, rows[0].name)
    },

    async history(accountId, domainId, limit) {
      const rows = await db
        .select()
        .from(policyChanges)
        .where(ofDomain(accountId, domainId))
        .orderBy(desc(policyChanges.createdAt), desc(policyChanges.id))
        .limit(limit)
      return rows.map(toChange)
    },

    pending,

    async apply(accountId, domainId, change: AppliedChange) {
      try {
        await db.transaction(async (transaction) => {
          const tx = transaction as unknown as Db
          // A record on a connected DNS provider was written through it before (ZoneDmarc).
          const write = { domainId, record: change.toRecord, at: change.at, expected: change.fromRecord }
          if (change.through !== 'provider' && (await replaceHostedDmarc(tx, accountId, write)) === null)
            throw new Conflict()
          const applied = {
            status: 'applied' as const,
            toPolicy: change.to.policy,
            toPct: change.to.pct,
            toRecord: change.toRecord,
            reason: change.reason,
            actor: change.actor,
            appliedAt: change.at,
          }
          const proposal =
            change.proposalId === undefined
              ? []
              : await tx
                  .update(policyChanges)
                  .set(applied)
                  .where(and(waiting(accountId, domainId), eq(policyChanges.id, change.proposalId)))
                  .returning({ id: policyChanges.id })
          if (change.proposalId !== undefined && proposal.length === 0) throw new Conflict()
          await tx.update(policyChanges).set({ status: 'withdrawn' }).where(waiting(accountId, domainId))
          if (proposal.length === 0) {
            await tx.insert(policyChanges).values({
              ...applied,
              accountId,
              domainId,
              kind: change.kind,
              fromPolicy: change.from.policy,
              fromPct: change.from.pct,
              fromRecord: change.fromRecord,
              createdAt: change.at,
            })
          }
          if (change.rollsBack !== undefined) {
            await tx
              .update(policyChanges)
              .set({ rolledBackAt: change.at })
              .where(and(ofDomain(accountId, domainId), eq(policyChanges.id, change.rollsBack)))
          }
          await auditDmarc(tx, accountId, {
            domainId,
            actor: change.actor,
            action: AUDIT_ACTIONS[change.kind],
            before: change.fromRecord,
            after: change.toRecord,
            reason: change.reason,
            at: change.at,
          })
          await appendEvent(tx, accountId, change.event)
        })
        return 'applied'
      } catch (error) {
        if (error instanceof Conflict) return 'conflict'
        throw error
      }
    },

    async propose(accountId, domainId, change) {
      const current = await pending(accountId, domainId)
      const same =
        current?.kind === change.kind &&
        current.fromRecord === change.fromRecord &&
        current.toRecord === change.toRecord
      if (same) return 'unchanged'
      try {
        await db.transaction(async (transaction) => {
          const tx = transaction as unknown as Db
          await tx.update(policyChanges).set({ status: 'withdrawn' }).where(waiting(accountId, domainId))
          await tx.insert(policyChanges).values({
            accountId,
            domainId,
            kind: change.kind,
            status: 'proposed',
            fromPolicy: change.from.policy,
            fromPct: change.from.pct,
            toPolicy: change.to.policy,
            toPct: change.to.pct,
            fromRecord: change.fromRecord,
            toRecord: change.toRecord,
            reason: change.reason,
            actor: change.actor,
            createdAt: change.at,
          })
        })
      } catch (error) {
        // Two runs proposing at once: one proposal waits, which is all that was wanted.
        if (isUniqueViolation(error, 'policy_changes_one_proposal_key')) return 'unchanged'
        throw error
      }
      return 'proposed'
    },

    async withdraw(accountId, domainId) {
      const rows = await db
        .update(policyChanges)
        .set({ status: 'withdrawn' })
        .where(waiting(accountId, domainId))
        .returning({ id: policyChanges.id })
      return rows.length > 0
    },

    async candidates(afterId, limit) {
      const rows = await db
        .select({ accountId: domains.accountId, domainId: domains.id, name: domains.name })
        .from(domains)
        .leftJoin(hostedRecords, and(eq(hostedRecords.domainId, domains.id), eq(hostedRecords.kind, 'dmarc')))
        .where(
          and(
            gt(domains.id, afterId),
            isNotNull(domains.verifiedAt),
            ne(domains.automationLevel, 'manual'),
            // Hosted, or its `_dmarc` TXT may be on a connected DNS provider (the run finds out).
            or(
              isNotNull(hostedRecords.domainId),
              exists(
                db
                  .select({ id: dnsProviderConnections.id })
                  .from(dnsProviderConnections)
                  .where(eq(dnsProviderConnections.accountId, domains.accountId)),
              ),
            ),
          ),
        )
        .orderBy(asc(domains.id))
        .limit(limit)
      return rows
    },
  }
}
