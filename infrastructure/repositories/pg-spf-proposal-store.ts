import { and, desc, eq } from 'drizzle-orm'
import type { RecordSet } from '../../domain/dns-providers/ports.ts'
import type { SpfProposal, SpfProposalStore } from '../../domain/spf-management/proposals.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { spfProposals } from '../db/schema/spf.ts'

// SPF changes waiting for approval (domain/spf-management/proposals.ts). Every method filters by
// account and domain; one proposal waits per domain (a partial unique index), a newer one
// withdraws it in the same transaction.

const toProposal = (row: typeof spfProposals.$inferSelect): SpfProposal => ({
  id: row.id,
  status: row.status,
  fromRecord: row.fromRecord,
  toRecord: row.toRecord,
  before: (row.before as RecordSet | null) ?? null,
  after: row.after as RecordSet,
  reason: row.reason,
  actor: row.actor,
  createdAt: row.createdAt,
  decidedAt: row.decidedAt,
  decidedBy: row.decidedBy,
  writeId: row.writeId,
})

export function pgSpfProposalStore(db: Db): SpfProposalStore {
  const ofDomain = (accountId: string, domainId: number) =>
    and(eq(spfProposals.accountId, accountId), eq(spfProposals.domainId, domainId))
  const waiting = (accountId: string, domainId: number) =>
    and(ofDomain(accountId, domainId), eq(spfProposals.status, 'proposed'))

  async function current(accountId: string, domainId: number) {
    const rows = await db.select().from(spfProposals).where(waiting(accountId, domainId)).limit(1)
    return rows[0] === undefined ? null : toProposal(rows[0])
  }

  return {
    async propose(accountId, domainId, proposal) {
      const held = await current(accountId, domainId)
      if (held !== null && held.fromRecord === proposal.fromRecord && held.toRecord === proposal.toRecord)
        return held
      try {
        return await db.transaction(async (transaction) => {
          const tx = transaction as unknown as Db
          await tx
            .update(spfProposals)
            .set({ status: 'withdrawn', decidedAt: proposal.at, decidedBy: proposal.actor })
            .where(waiting(accountId, domainId))
          const [row] = await tx
            .insert(spfProposals)
            .values({
              accountId,
              domainId,
              status: 'proposed',
              fromRecord: proposal.fromRecord,
              toRecord: proposal.toRecord,
              before: proposal.before,
              after: proposal.after,
              reason: proposal.reason,
              actor: proposal.actor,
              createdAt: proposal.at,
            })
            .returning()
          return toProposal(row!)
        })
      } catch (error) {
        // Two changes proposing at once: the other one waits; it is the newer record either way.
        if (!isUniqueViolation(error, 'spf_proposals_one_waiting_key')) throw error
        const other = await current(accountId, domainId)
        if (other === null) throw error
        return other
      }
    },

    async list(accountId, domainId, limit) {
      const rows = await db
        .select()
        .from(spfProposals)
        .where(ofDomain(accountId, domainId))
        .orderBy(desc(spfProposals.createdAt), desc(spfProposals.id))
        .limit(limit)
      const proposals = rows.map(toProposal)
      // The waiting one first, whatever its age.
      return [
        ...proposals.filter((p) => p.status === 'proposed'),
        ...proposals.filter((p) => p.status !== 'proposed'),
      ]
    },

    async get(accountId, domainId, id) {
      const rows = await db
        .select()
        .from(spfProposals)
        .where(and(ofDomain(accountId, domainId), eq(spfProposals.id, id)))
      return rows[0] === undefined ? null : toProposal(rows[0])
    },

    async decide(accountId, domainId, id, decision) {
      const rows = await db
        .update(spfProposals)
        .set({
          status: decision.status,
          decidedAt: decision.at,
          decidedBy: decision.by,
          writeId: decision.writeId ?? null,
        })
        .where(and(waiting(accountId, domainId), eq(spfProposals.id, id)))
        .returning()
      return rows[0] === undefined ? null : toProposal(rows[0])
    },
  }
}
