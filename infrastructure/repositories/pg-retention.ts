import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../db/database.ts'
import { dropExpiredPartitions } from './pg-partitions.ts'

// Retention per account (account_settings; defaults when an account has no row): raw messages,
// aggregate records and failure reports older than their window are removed in small batches, so
// no statement holds long locks. Rollups and daily totals are kept: they are what summaries read;
// so are the monthly rollups built from them (pg-monthly-rollups.ts), which stay equal to them.
// Aggregate records are partitioned by month (pg-partitions.ts): a month older than every
// account's window is dropped whole first; the batches then remove what remains, the rows of
// accounts with shorter windows.

const BATCH = 5000

/** Runs `statement` (a delete of at most `batch` rows answering `n`) until a batch comes back short. */
export async function inBatches(
  db: Db,
  statement: () => ReturnType<typeof sql>,
  batch = BATCH,
): Promise<number> {
  let total = 0
  while (true) {
    const rows = rowsOf<{ n: number }>(await db.execute(statement()))
    const n = Number(rows[0]?.n ?? 0)
    total += n
    if (n < batch) return total
  }
}

export interface RetentionResult {
  raw: number
  /** Records deleted in batches (rows of dropped partitions are not counted). */
  records: number
  forensic: number
  /** Monthly partitions of aggregate_records dropped whole. */
  partitionsDropped: string[]
}

export async function applyRetention(db: Db): Promise<RetentionResult> {
  const partitions = await dropExpiredPartitions(db)
  const settings = sql`(select a.id as account_id,
      coalesce(s.raw_retention_days, 30) as raw_days,
      coalesce(s.record_retention_days, 400) as record_days,
      coalesce(s.forensic_retention_days, 90) as forensic_days
    from accounts a left join account_settings s on s.account_id = a.id)`
  // Raw bytes of processed messages only: a quarantined message keeps its bytes for a retry.
  const raw = await inBatches(
    db,
    () => sql`with doomed as (
      select m.id from ingest_messages m join ${settings} k on k.account_id = m.account_id
      where m.status = 'processed' and (m.raw is not null or m.pieces > 0)
        and m.received_at < now() - make_interval(days => k.raw_days)
      limit ${BATCH})
    , pieces as (delete from ingest_message_pieces where message_id in (select id from doomed))
    , done as (update ingest_messages set raw = null, pieces = 0 where id in (select id from doomed) returning 1)
    select count(*)::int as n from done`,
  )
  // No record is due before the shortest window's cutoff: as a constant, it lets PostgreSQL skip
  // the partitions of later months, in the search and in the delete (which matches on the whole
  // key, so each row is found through its own partition's primary key).
  const cutoff = rowsOf<{ day: string }>(
    await db.execute(sql`select to_char(current_date - coalesce(min(k.record_days), 0), 'YYYY-MM-DD') as day
      from ${settings} k`),
  )[0]!.day
  const records = await inBatches(
    db,
    () => sql`with doomed as (
      select r.id, r.day from aggregate_records r join ${settings} k on k.account_id = r.account_id
      where r.day < ${cutoff}::date and r.day < current_date - k.record_days limit ${BATCH})
    , done as (delete from aggregate_records r using doomed d
      where r.day < ${cutoff}::date and r.id = d.id and r.day = d.day returning 1)
    select count(*)::int as n from done`,
  )
  const forensic = await inBatches(
    db,
    () => sql`with doomed as (
      select f.id from forensic_reports f join ${settings} k on k.account_id = f.account_id
      where f.created_at < now() - make_interval(days => k.forensic_days) limit ${BATCH})
    , done as (delete from forensic_reports where id in (select id from doomed) returning 1)
    select count(*)::int as n from done`,
  )
  return { raw, records, forensic, partitionsDropped: partitions.dropped }
}
