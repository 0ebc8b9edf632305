import { and, eq, sql } from 'drizzle-orm'
import { type HostedDmarc, hostedDmarcName } from '../../domain/dmarc/hosting.ts'
import type { DmarcHostingStore } from '../../domain/dmarc/hosting-use-cases.ts'
import { domainLabel } from '../../domain/spf-management/managed-record.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { domains } from '../db/schema/domains.ts'
import { policyChanges } from '../db/schema/policy.ts'
import { auditLog, hostedRecords, spfManagement } from '../db/schema/spf.ts'
import { domainRef } from './pg-domain-ref.ts'

// Hosted DMARC records (issue #5): one hosted_records row of kind 'dmarc' per domain, named
// `<label>._dmarc.<SPF_ZONE>` and served by the built-in responder (pg-spf-store.ts hostedTxt).
// hosted_records carries no account: every read and write goes through the domain's account, and
// every write leaves an audit_log row in the same transaction.

const DMARC = 'dmarc'

/** What the responder serves for a domain, if anything (scoped by account through domains). */
async function hostedOf(db: Db, accountId: string, domainId: number): Promise<HostedDmarc | null> {
  const rows = await db
    .select({ name: hostedRecords.name, txt: hostedRecords.txt, updatedAt: hostedRecords.updatedAt })
    .from(hostedRecords)
    .innerJoin(domains, eq(domains.id, hostedRecords.domainId))
    .where(
      and(
        eq(hostedRecords.domainId, domainId),
        eq(hostedRecords.kind, DMARC),
        eq(domains.accountId, accountId),
      ),
    )
    .limit(1)
  const row = rows[0]
  return row === undefined ? null : { name: row.name, record: row.txt[0] ?? '', updatedAt: row.updatedAt }
}

export interface HostedWrite {
  domainId: number
  record: string
  at: Date
  /** Replace only while the served record is still this one (optimistic concurrency). */
  expected?: string
}

/**
 * Replaces the served record inside the caller's transaction; null when the domain has no hosted
 * record in this account, or (with `expected`) when the record changed meanwhile.
 */
export async function replaceHostedDmarc(
  tx: Db,
  accountId: string,
  write: HostedWrite,
): Promise<HostedDmarc | null> {
  const owned = sql`${hostedRecords.domainId} in (select ${domains.id} from ${domains} where ${domains.id} = ${write.domainId} and ${domains.accountId} = ${accountId})`
  const rows = await tx
    .update(hostedRecords)
    .set({ txt: [write.record], updatedAt: write.at })
    .where(
      and(
        eq(hostedRecords.domainId, write.domainId),
        eq(hostedRecords.kind, DMARC),
        owned,
        write.expected === undefined ? undefined : sql`${hostedRecords.txt}[1] = ${write.expected}`,
      ),
    )
    .returning({ name: hostedRecords.name, updatedAt: hostedRecords.updatedAt })
  const row = rows[0]
  return row === undefined ? null : { name: row.name, record: write.record, updatedAt: row.updatedAt }
}

export async function auditDmarc(
  tx: Db,
  accountId: string,
  entry: {
    domainId: number
    actor: string
    action: string
    before: string | null
    after: string
    reason: string
    at: Date
  },
): Promise<void> {
  await tx.insert(auditLog).values({
    accountId,
    domainId: entry.domainId,
    actor: entry.actor,
    action: entry.action,
    before: entry.before === null ? null : { record: entry.before },
    after: { record: entry.after },
    reason: entry.reason,
    createdAt: entry.at,
  })
}

export function pgDmarcHosting(db: Db, options: { zone: string }): DmarcHostingStore {
  const zone = options.zone.toLowerCase().replace(/\.$/, '')

  /** One attempt; throws a unique violation when the name was taken meanwhile. */
  async function insert(
    accountId: string,
    input: Parameters<DmarcHostingStore['host']>[1],
    keyed: boolean,
  ): Promise<{ hosted: HostedDmarc; created: boolean }> {
    return db.transaction(async (transaction) => {
      const tx = transaction as unknown as Db
      const owned = await tx
        .select({ id: domains.id })
        .from(domains)
        .where(and(eq(domains.id, input.domainId), eq(domains.accountId, accountId)))
        .for('update')
      if (owned.length === 0) throw new Error(`domain ${input.domainId} is not in account ${accountId}`)
      const existing = await hostedOf(tx, accountId, input.domainId)
      if (existing !== null) return { hosted: existing, created: false }
      // One label per domain: the SPF label when SPF is managed, else the readable one. Labels are
      // unique across accounts; a second account with the same name gets a keyed label, as SPF does.
      const spf = await tx
        .select({ label: spfManagement.label })
        .from(spfManagement)
        .where(and(eq(spfManagement.domainId, input.domainId), eq(spfManagement.accountId, accountId)))
      let label = spf[0]?.label ?? domainLabel(input.domainName)
      if (keyed) label = domainLabel(input.domainName, accountId)
      const name = hostedDmarcName(label, zone)
      await tx.insert(hostedRecords).values({
        name,
        domainId: input.domainId,
        kind: DMARC,
        txt: [input.record],
        updatedAt: input.at,
      })
      await auditDmarc(tx, accountId, {
        domainId: input.domainId,
        actor: input.actor,
        action: 'dmarc.host',
        before: null,
        after: input.record,
        reason: `hosted at ${name}`,
        at: input.at,
      })
      return { hosted: { name, record: input.record, updatedAt: input.at }, created: true }
    })
  }

  return {
    domain: (accountId, name) => domainRef(db, accountId, name),

    get: (accountId, domainId) => hostedOf(db, accountId, domainId),

    async host(accountId, input) {
      try {
        return await insert(accountId, input, false)
      } catch (error) {
        if (!isUniqueViolation(error, 'hosted_records_pkey')) throw error
        // The readable name belongs to another account's domain of the same name.
        return insert(accountId, input, true)
      }
    },

    async update(accountId, input) {
      return db.transaction(async (transaction) => {
        const tx = transaction as unknown as Db
        const before = await hostedOf(tx, accountId, input.domainId)
        if (before === null) return null
        const hosted = await replaceHostedDmarc(tx, accountId, input)
        if (hosted === null) return null
        await auditDmarc(tx, accountId, {
          domainId: input.domainId,
          actor: input.actor,
          action: 'dmarc.update',
          before: before.record,
          after: input.record,
          reason: input.reason,
          at: input.at,
        })
        const change = input.policyChange
        if (change !== null) {
          // An edit of p or pct is a step of the policy's history; a waiting proposal was made for
          // the record as it was, so it no longer applies.
          await tx
            .update(policyChanges)
            .set({ status: 'withdrawn' })
            .where(and(eq(policyChanges.domainId, input.domainId), eq(policyChanges.status, 'proposed')))
          await tx.insert(policyChanges).values({
            accountId,
            domainId: input.domainId,
            kind: 'edit',
            status: 'applied',
            fromPolicy: change.from.policy,
            fromPct: change.from.pct,
            toPolicy: change.to.policy,
            toPct: change.to.pct,
            fromRecord: change.fromRecord,
            toRecord: input.record,
            reason: input.reason,
            actor: input.actor,
            createdAt: input.at,
            appliedAt: input.at,
          })
        }
        return hosted
      })
    },
  }
}
