import { and, desc, eq, inArray, sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { RecordSet } from '../../domain/dns-providers/ports.ts'
import {
  type SpfProposal,
  type SpfProposalStore,
  WaitingChanged,
} from '../../domain/spf-management/proposals.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { spfProposals } from '../db/schema/spf.ts'
import { evaluateNow } from '../queue/alert-triggers.ts'
import { EVALUATE_OPERATIONS_ALERTS, SPF_PROVIDER_RETRY, send } from '../queue/catalogue.ts'

// SPF changes waiting for approval, and failed `automatic` writes waiting for their retry
// (domain/spf-management/proposals.ts, provider-retry.ts). Every method filters by account and
// domain; one proposal and one retry wait per domain (partial unique indexes), a newer one
// withdraws the older in the same transaction. A retry row is written with its pg-boss job in one
// transaction, so a write waiting for its retry always has a job.

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
const jobDb = (tx: Tx) => fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql)

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
  attempts: row.attempts,
  lastError: row.lastError,
})

export function pgSpfProposalStore(db: Db, boss: PgBoss | null = null): SpfProposalStore {
  const ofDomain = (accountId: string, domainId: number) =>
    and(eq(spfProposals.accountId, accountId), eq(spfProposals.domainId, domainId))
  const waiting = (accountId: string, domainId: number) =>
    and(ofDomain(accountId, domainId), eq(spfProposals.status, 'proposed'))

  async function current(accountId: string, domainId: number, status: 'proposed' | 'retrying' = 'proposed') {
    const rows = await db
      .select()
      .from(spfProposals)
      .where(and(ofDomain(accountId, domainId), eq(spfProposals.status, status)))
      .limit(1)
    return rows[0] === undefined ? null : toProposal(rows[0])
  }
  // Retry rows raise and clear `spf_provider_write_failing`: the account's operations rules run at
  // once, not at the next debounce slot (a handful of transitions per failed write).
  const evaluate = async (accountId: string) => {
    if (boss !== null) await evaluateNow(boss, EVALUATE_OPERATIONS_ALERTS, { accountId }, accountId)
  }

  return {
    pending: (accountId, domainId, status) => current(accountId, domainId, status),

    canRetry: () => boss !== null,

    async retryLater(accountId, domain, proposal, error) {
      const domainId = domain.id
      if (boss === null) throw new Error('no job queue: a failed SPF write cannot be retried')
      const row = await db.transaction(async (tx) => {
        await tx
          .update(spfProposals)
          .set({ status: 'withdrawn', decidedAt: proposal.at, decidedBy: proposal.actor })
          .where(and(ofDomain(accountId, domainId), eq(spfProposals.status, 'retrying')))
        const [inserted] = await tx
          .insert(spfProposals)
          .values({
            accountId,
            domainId,
            status: 'retrying',
            fromRecord: proposal.fromRecord,
            toRecord: proposal.toRecord,
            before: proposal.before,
            after: proposal.after,
            reason: proposal.reason,
            actor: proposal.actor,
            createdAt: proposal.at,
            lastError: error,
          })
          .returning()
        const job = { accountId, domainId, domain: domain.name, proposalId: inserted!.id }
        // The first retry after the queue's delay: the write has just failed.
        await send(boss, SPF_PROVIDER_RETRY, job, {
          db: jobDb(tx),
          singletonKey: String(inserted!.id),
          startAfter: SPF_PROVIDER_RETRY.options.retryDelay ?? 60,
        })
        return inserted!
      })
      await evaluate(accountId)
      return toProposal(row)
    },

    async retried(accountId, domainId, id, error) {
      await db
        .update(spfProposals)
        .set({ attempts: sql`${spfProposals.attempts} + 1`, lastError: error })
        .where(
          and(ofDomain(accountId, domainId), eq(spfProposals.id, id), eq(spfProposals.status, 'retrying')),
        )
      await evaluate(accountId)
    },

    async propose(accountId, domainId, proposal) {
      const held = await current(accountId, domainId)
      if (held !== null && held.fromRecord === proposal.fromRecord && held.toRecord === proposal.toRecord)
        return held
      try {
        return await db.transaction(async (transaction) => {
          const tx = transaction as unknown as Db
          const gone = await tx
            .update(spfProposals)
            .set({ status: 'withdrawn', decidedAt: proposal.at, decidedBy: proposal.actor })
            .where(waiting(accountId, domainId))
            .returning({ id: spfProposals.id })
          if (proposal.replaces !== undefined && (gone[0]?.id ?? null) !== proposal.replaces)
            throw new WaitingChanged(`the waiting SPF proposal of domain ${domainId} changed meanwhile`)
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
        if (!isUniqueViolation(error, 'spf_proposals_one_waiting_key')) throw error
        // Two changes proposing at once. One built on the waiting proposal is built again on the
        // other (it would be lost otherwise); else the other waits, the newer record either way.
        if (proposal.replaces !== undefined)
          throw new WaitingChanged(`the waiting SPF proposal of domain ${domainId} changed meanwhile`)
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
          ...(decision.error === undefined ? {} : { lastError: decision.error }),
        })
        .where(
          and(
            ofDomain(accountId, domainId),
            inArray(spfProposals.status, ['proposed', 'retrying']),
            eq(spfProposals.id, id),
          ),
        )
        .returning()
      if (rows[0] === undefined) return null
      if (rows[0].attempts > 0 || rows[0].lastError !== null) await evaluate(accountId)
      return toProposal(rows[0])
    },
  }
}
