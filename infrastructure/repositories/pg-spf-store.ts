import { and, asc, count, desc, eq, lt, ne } from 'drizzle-orm'
import { offsetOf } from '../../domain/shared/pagination.ts'
import type { HostedRecords, ManagedSpfConfig } from '../../domain/spf-management/managed-record.ts'
import type {
  HostedTxtLookup,
  ManagedState,
  ReplanItem,
  SaveOutcome,
  SpfChange,
  SpfStore,
} from '../../domain/spf-management/ports.ts'
import type { SpfVersion } from '../../domain/spf-management/spf-change.ts'
import type { Db } from '../db/database.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { domains } from '../db/schema/domains.ts'
import { auditLog, hostedRecords, spfManagement, spfVersions } from '../db/schema/spf.ts'
import { domainRef } from './pg-domain-ref.ts'
import { appendEvent } from './pg-event-outbox.ts'

// Managed SPF configurations, their versions, the audit log and the records the built-in DNS
// responder serves. Every tenant-facing query is scoped by account; versions and hosted records
// carry no account of their own and are reached through their domain's spf_management row.

/** The version moved on (or the domain was activated) since the change was planned. */
class Conflict extends Error {}

const toVersion = (row: typeof spfVersions.$inferSelect): SpfVersion => ({
  version: row.version,
  config: row.config as ManagedSpfConfig,
  records: row.records as HostedRecords,
  reason: row.reason,
  actor: row.actor,
  createdAt: row.createdAt.toISOString(),
})

const stateColumns = {
  domainId: spfManagement.domainId,
  label: spfManagement.label,
  hostedName: spfManagement.hostedName,
  config: spfManagement.config,
  version: spfManagement.version,
  records: spfVersions.records,
  activatedAt: spfManagement.activatedAt,
  plannedAt: spfManagement.plannedAt,
}

type StateRow = Omit<ManagedState, 'config' | 'records'> & { config: unknown; records: unknown }

const toState = (row: StateRow): ManagedState => ({
  ...row,
  config: row.config as ManagedSpfConfig,
  records: row.records as HostedRecords,
})

/** Lower-case, without the trailing dot: how hosted_records names are stored. */
const ownerName = (name: string) => name.trim().toLowerCase().replace(/\.$/, '')

export function pgSpfStore(db: Db, options: { zone: string }): SpfStore & HostedTxtLookup {
  const zone = ownerName(options.zone)
  const managedOf = (accountId: string, domainId: number) =>
    and(eq(spfManagement.accountId, accountId), eq(spfManagement.domainId, domainId))
  const currentVersion = and(
    eq(spfVersions.domainId, spfManagement.domainId),
    eq(spfVersions.version, spfManagement.version),
  )

  async function write(accountId: string, change: SpfChange): Promise<void> {
    const { version } = change
    const at = new Date(version.createdAt)
    await db.transaction(async (tx) => {
      if (change.basedOn === null) {
        const owned = await tx
          .select({ id: domains.id })
          .from(domains)
          .where(and(eq(domains.id, change.domainId), eq(domains.accountId, accountId)))
        if (owned.length === 0) throw new Error(`domain ${change.domainId} is not in account ${accountId}`)
        await tx.insert(spfManagement).values({
          domainId: change.domainId,
          accountId,
          label: change.label,
          hostedName: change.hostedName,
          config: version.config,
          version: version.version,
          activatedAt: at,
          plannedAt: at,
        })
      } else {
        const updated = await tx
          .update(spfManagement)
          .set({ config: version.config, version: version.version, plannedAt: at })
          .where(and(managedOf(accountId, change.domainId), eq(spfManagement.version, change.basedOn)))
          .returning({ domainId: spfManagement.domainId })
        if (updated.length === 0) throw new Conflict()
      }
      await tx.insert(spfVersions).values({
        domainId: change.domainId,
        version: version.version,
        config: version.config,
        records: version.records,
        reason: version.reason,
        actor: version.actor,
        createdAt: at,
      })
      // The responder serves whatever these rows say: replaced whole, in the same transaction, so
      // a query never sees half of one version and half of another.
      await tx
        .delete(hostedRecords)
        .where(and(eq(hostedRecords.domainId, change.domainId), eq(hostedRecords.kind, 'spf')))
      await tx.insert(hostedRecords).values(
        version.records.records.map((record) => ({
          name: ownerName(record.name),
          domainId: change.domainId,
          kind: 'spf',
          txt: [record.text],
          updatedAt: at,
        })),
      )
      await tx.insert(auditLog).values({
        accountId,
        domainId: change.domainId,
        actor: version.actor,
        action: change.action,
        before: change.before === null ? null : { version: change.basedOn, config: change.before },
        after: {
          version: version.version,
          config: version.config,
          records: version.records.records.map(({ name, text }) => ({ name, text })),
        },
        reason: version.reason,
        createdAt: at,
      })
      if (change.event !== null) await appendEvent(tx as unknown as Db, accountId, change.event)
    })
  }

  return {
    domain: (accountId, name) => domainRef(db, accountId, name),

    async get(accountId, domainId) {
      const rows = await db
        .select(stateColumns)
        .from(spfManagement)
        .innerJoin(spfVersions, currentVersion)
        .where(managedOf(accountId, domainId))
      return rows[0] === undefined ? null : toState(rows[0] as StateRow)
    },

    async versions(accountId, domainId, page) {
      const where = managedOf(accountId, domainId)
      const joined = eq(spfVersions.domainId, spfManagement.domainId)
      const [rows, totals] = await Promise.all([
        db
          .select({ v: spfVersions })
          .from(spfVersions)
          .innerJoin(spfManagement, joined)
          .where(where)
          .orderBy(desc(spfVersions.version))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ total: count() }).from(spfVersions).innerJoin(spfManagement, joined).where(where),
      ])
      return { items: rows.map((row) => toVersion(row.v)), total: totals[0]?.total ?? 0 }
    },

    async version(accountId, domainId, version) {
      const rows = await db
        .select({ v: spfVersions })
        .from(spfVersions)
        .innerJoin(spfManagement, eq(spfVersions.domainId, spfManagement.domainId))
        .where(and(managedOf(accountId, domainId), eq(spfVersions.version, version)))
      return rows[0] === undefined ? null : toVersion(rows[0].v)
    },

    async labelTaken(label, domainId) {
      const rows = await db
        .select({ domainId: spfManagement.domainId })
        .from(spfManagement)
        .where(and(eq(spfManagement.label, label), ne(spfManagement.domainId, domainId)))
        .limit(1)
      return rows.length > 0
    },

    async saveChange(accountId, change): Promise<SaveOutcome> {
      try {
        await write(accountId, change)
        return 'saved'
      } catch (error) {
        if (error instanceof Conflict) return 'conflict'
        if (
          isUniqueViolation(error, 'spf_management_label_unique') ||
          isUniqueViolation(error, 'spf_management_hostedName_unique')
        )
          return 'label_taken'
        // Two first activations at once, or two changes from the same version.
        if (
          isUniqueViolation(error, 'spf_management_pkey') ||
          isUniqueViolation(error, 'spf_versions_domain_id_version_pk')
        )
          return 'conflict'
        throw error
      }
    },

    async touchPlanned(accountId, domainId, at) {
      await db.update(spfManagement).set({ plannedAt: at }).where(managedOf(accountId, domainId))
    },

    async listManagedForReplan(before, limit): Promise<ReplanItem[]> {
      const rows = await db
        .select({ ...stateColumns, accountId: spfManagement.accountId, domainName: domains.name })
        .from(spfManagement)
        .innerJoin(spfVersions, currentVersion)
        .innerJoin(domains, eq(domains.id, spfManagement.domainId))
        .where(lt(spfManagement.plannedAt, before))
        .orderBy(asc(spfManagement.plannedAt))
        .limit(limit)
      return rows.map((row) => ({
        ...toState(row as StateRow),
        accountId: row.accountId,
        domainName: row.domainName,
      }))
    },

    async hostedTxt(name) {
      const owner = ownerName(name)
      const rows = await db
        .select({ txt: hostedRecords.txt })
        .from(hostedRecords)
        .where(eq(hostedRecords.name, owner))
        .limit(1)
      if (rows[0] !== undefined) return { txt: rows[0].txt }
      // Every hosted name is `<label>.<zone>` or `_spfN.<label>.<zone>` (SPF), or
      // `<label>._dmarc.<zone>` (hosted DMARC, pg-dmarc-hosting.ts), and `<label>.<zone>` always has
      // its record: the zone, the names above it and `_dmarc.<zone>` are the only names without
      // records that exist (RFC 8020: answering NXDOMAIN there would deny everything below).
      if (owner === zone || zone.endsWith(`.${owner}`) || owner === `_dmarc.${zone}`) return { txt: [] }
      return null
    },
  }
}
