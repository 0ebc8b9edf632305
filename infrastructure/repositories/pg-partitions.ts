import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../db/database.ts'

// aggregate_records is PARTITION BY RANGE (day): one partition a month (aggregate_records_y2026m11
// holds [2026-11-01, 2026-12-01)) and a DEFAULT partition for any day whose month has none, so an
// insert never fails for lack of a partition (migration 0010). This module keeps it that way:
// months are created ahead, rows that landed in the default partition are moved into their month
// when it is created, and a month older than every account's record window is dropped whole,
// which is instant where deleting its rows would take minutes (docs/operations.md).
//
// Creating a month, with the weakest locks we found (PostgreSQL manual, ALTER TABLE, ATTACH
// PARTITION): CREATE TABLE ... PARTITION OF takes ACCESS EXCLUSIVE on aggregate_records, which
// stops every read and write for as long as it waits and then scans the default partition; and
// detaching the default partition to move its rows would leave inserts with nowhere to go, or
// hold that lock for the whole move. Instead, in one transaction:
//   1. the month is created as a standalone table, with a CHECK constraint equal to its bounds;
//   2. aggregate_records is locked in SHARE ROW EXCLUSIVE mode: writers (ingest, retention) wait,
//      readers do not. Without it a report of that month stored meanwhile would be routed to the
//      default partition and fail once the month is attached;
//   3. the month's rows move from the default partition into the table (DELETE ... RETURNING);
//   4. ATTACH PARTITION: SHARE UPDATE EXCLUSIVE on aggregate_records (compatible with readers and
//      with the lock above), no scan of the new table (the CHECK proves its bounds), a scan of the
//      default partition under ACCESS EXCLUSIVE (kept short by keeping that partition small: the
//      job moves out every month it still holds);
//   5. the CHECK, now redundant, is dropped.
// Writers are held for the length of the move, which is nothing for a month ahead (the usual
// case). Every step waits at most LOCK_TIMEOUT for a lock (behind a large report's COPY, say),
// then gives up with nothing changed; the job retries, and months are created three ahead.
//
// Two workers running this at once (pg-boss runs a cron once per tick, but a job at start and a
// retry may overlap) are serialised by a transaction-scoped advisory lock, and each step checks
// again under it, so both finish without error and the second finds nothing to do.

const PARENT = 'aggregate_records'
const DEFAULT_PARTITION = 'aggregate_records_default'
// Any fixed 64-bit key ("dmrp"); the migration lock (infrastructure/db/migrate.ts) is another.
const PARTITION_LOCK_KEY = 0x646d7270
// Short: while a DDL statement waits for its lock, every query queued behind it waits too.
const LOCK_TIMEOUT = '2s'
/** An account without settings keeps records this long (account_settings' default). */
const DEFAULT_RECORD_DAYS = 400

const MONTH = /^(\d{4})-(\d{2})$/

/** 'YYYY-MM' of a UTC date (report days are UTC dates). */
export function monthOf(date: Date): string {
  return date.toISOString().slice(0, 7)
}

/** 'YYYY-MM' plus n months (n may be negative). */
export function addMonths(month: string, n: number): string {
  const match = MONTH.exec(month)
  if (!match) throw new Error(`not a month (YYYY-MM): ${month}`)
  return monthOf(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1 + n, 1)))
}

/** The partition holding a month: aggregate_records_y2026m11. */
export function partitionName(month: string): string {
  const match = MONTH.exec(month)
  if (!match) throw new Error(`not a month (YYYY-MM): ${month}`)
  return `${PARENT}_y${match[1]}m${match[2]}`
}

export interface Partition {
  name: string
  /** Inclusive first day, YYYY-MM-DD. */
  from: string
  /** Exclusive end, YYYY-MM-DD. */
  to: string
}

const BOUND = /FROM \('(\d{4}-\d{2}-\d{2})'\) TO \('(\d{4}-\d{2}-\d{2})'\)/

/** The range partitions of aggregate_records (the default partition excluded), oldest first. */
export async function listPartitions(db: Db): Promise<Partition[]> {
  const rows = rowsOf<{ name: string; bound: string }>(
    await db.execute(sql`select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass(${PARENT})`),
  )
  const partitions: Partition[] = []
  for (const row of rows) {
    const match = BOUND.exec(row.bound)
    if (match) partitions.push({ name: row.name, from: match[1]!, to: match[2]! })
  }
  return partitions.sort((a, b) => a.from.localeCompare(b.from))
}

/** The day before which every account's record window has passed (today minus the longest window). */
async function recordHorizon(db: Db): Promise<string> {
  const rows = rowsOf<{ day: string }>(
    await db.execute(sql`select to_char(current_date - coalesce(max(coalesce(s.record_retention_days, ${DEFAULT_RECORD_DAYS})), ${DEFAULT_RECORD_DAYS}), 'YYYY-MM-DD') as day
      from accounts a left join account_settings s on s.account_id = a.id`),
  )
  return rows[0]!.day
}

function lockTimedOut(error: unknown): boolean {
  // lock_not_available; drizzle wraps the driver's error in its own.
  const code = (e: unknown) => (e as { code?: string } | null)?.code
  return code(error) === '55P03' || code((error as { cause?: unknown }).cause) === '55P03'
}

async function serialised<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${PARTITION_LOCK_KEY})`)
    await tx.execute(sql.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`))
    return work(tx as unknown as Db)
  })
}

const id = (name: string) => sql.identifier(name)

/** Creates one month's partition (the steps above); the number of rows moved, or null if it was there. */
async function createMonth(db: Db, month: string): Promise<number | null> {
  const name = partitionName(month)
  const from = `${month}-01`
  const to = `${addMonths(month, 1)}-01`
  return serialised(db, async (tx) => {
    // Covered already: by this name or by any partition overlapping the range.
    if ((await listPartitions(tx)).some((p) => p.from < to && p.to > from)) return null
    // DDL takes no parameters: the bounds are inlined, built above from a validated month.
    const range = sql.raw(`day >= '${from}' and day < '${to}'`)
    const check = id(`${name}_bounds`)
    await tx.execute(sql`create table ${id(name)} (like ${id(PARENT)} including defaults)`)
    await tx.execute(sql`alter table ${id(name)} add constraint ${check} check (${range})`)
    await tx.execute(sql`lock table ${id(PARENT)} in share row exclusive mode`)
    const moved = rowsOf<{ n: number }>(
      await tx.execute(sql`with moved as (delete from ${id(DEFAULT_PARTITION)} where ${range} returning *),
        copied as (insert into ${id(name)} select * from moved returning 1)
        select count(*)::int as n from copied`),
    )
    await tx.execute(
      sql`alter table ${id(PARENT)} attach partition ${id(name)} for values from (${sql.raw(`'${from}'`)}) to (${sql.raw(`'${to}'`)})`,
    )
    await tx.execute(sql`alter table ${id(name)} drop constraint ${check}`)
    return Number(moved[0]?.n ?? 0)
  })
}

export interface EnsureResult {
  /** Partitions created, by name. */
  created: string[]
  /** Rows moved out of the default partition into them. */
  moved: number
}

/**
 * Creates the partitions of `from` and the `monthsAhead` months after it that do not exist yet,
 * moving any of their rows out of the default partition. Idempotent.
 */
export async function ensureMonthlyPartitions(
  db: Db,
  options: { from: string; monthsAhead: number },
): Promise<EnsureResult> {
  const result: EnsureResult = { created: [], moved: 0 }
  for (let i = 0; i <= options.monthsAhead; i++) {
    const month = addMonths(options.from, i)
    const moved = await createMonth(db, month)
    if (moved === null) continue
    result.created.push(partitionName(month))
    result.moved += moved
  }
  return result
}

/**
 * The months that have rows in the default partition which some account still keeps, up to
 * `through` (later months stay there until the job creates them ahead).
 */
export async function monthsInDefault(db: Db, options: { through: string }): Promise<string[]> {
  const horizon = await recordHorizon(db)
  const end = `${addMonths(options.through, 1)}-01`
  const rows = rowsOf<{ month: string }>(
    await db.execute(sql`select distinct to_char(day, 'YYYY-MM') as month from ${id(DEFAULT_PARTITION)}
      where day >= ${horizon}::date and day < ${end}::date order by 1`),
  )
  return rows.map((row) => row.month)
}

/**
 * The daily job: the current month and `monthsAhead` after it, then every month the default
 * partition still holds rows of (a report about a month before the partitions began, or one
 * dated further ahead), so that partition stays small and the ATTACH's scan of it stays short.
 */
export async function maintainPartitions(
  db: Db,
  options: { today: Date; monthsAhead: number },
): Promise<EnsureResult> {
  const current = monthOf(options.today)
  const result = await ensureMonthlyPartitions(db, { from: current, monthsAhead: options.monthsAhead })
  for (const month of await monthsInDefault(db, { through: addMonths(current, options.monthsAhead) })) {
    const adopted = await ensureMonthlyPartitions(db, { from: month, monthsAhead: 0 })
    result.created.push(...adopted.created)
    result.moved += adopted.moved
  }
  return result
}

export interface DropResult {
  dropped: string[]
  /** Expired partitions left for the next run: a lock was not granted within LOCK_TIMEOUT. */
  busy: string[]
}

/**
 * Drops every monthly partition whose last day is older than every account's record window
 * (accounts without settings count with the default window). DROP TABLE of a partition is a
 * catalog change, but takes ACCESS EXCLUSIVE on aggregate_records, so it waits at most
 * LOCK_TIMEOUT; a partition that could not be dropped stays, and the batch deletes of
 * applyRetention remove its rows instead. Rows of accounts with shorter windows in partitions
 * kept here are left to those batch deletes too.
 */
export async function dropExpiredPartitions(db: Db): Promise<DropResult> {
  const horizon = await recordHorizon(db)
  const result: DropResult = { dropped: [], busy: [] }
  for (const partition of await listPartitions(db)) {
    if (partition.to > horizon) continue
    try {
      const dropped = await serialised(db, async (tx) => {
        // Under the lock, again: another worker may have dropped it, or an account's window grown.
        if (!(await listPartitions(tx)).some((p) => p.name === partition.name)) return false
        if (partition.to > (await recordHorizon(tx))) return false
        await tx.execute(sql`drop table ${id(partition.name)}`)
        return true
      })
      if (dropped) result.dropped.push(partition.name)
    } catch (error) {
      if (!lockTimedOut(error)) throw error
      result.busy.push(partition.name)
    }
  }
  return result
}
