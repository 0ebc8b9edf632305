import { sql } from 'drizzle-orm'
import { type Db, rowsOf } from '../db/database.ts'

// Retention per account (account_settings; defaults when an account has no row): raw messages,
// aggregate records and failure reports older than their window are removed in small batches, so
// no statement holds long locks. Rollups and daily totals are kept: they are what summaries read.

const BATCH = 5000

async function inBatches(db: Db, statement: () => ReturnType<typeof sql>): Promise<number> {
  let total = 0
  while (true) {
    const rows = rowsOf<{ n: number }>(await db.execute(statement()))
    const n = Number(rows[0]?.n ?? 0)
    total += n
    if (n < BATCH) return total
  }
}

export async function applyRetention(db: Db): Promise<{ raw: number; records: number; forensic: number }> {
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
      where m.status = 'processed' and m.raw is not null and m.received_at < now() - make_interval(days => k.raw_days)
      limit ${BATCH})
    , done as (update ingest_messages set raw = null where id in (select id from doomed) returning 1)
    select count(*)::int as n from done`,
  )
  const records = await inBatches(
    db,
    () => sql`with doomed as (
      select r.id from aggregate_records r join ${settings} k on k.account_id = r.account_id
      where r.day < current_date - k.record_days limit ${BATCH})
    , done as (delete from aggregate_records where id in (select id from doomed) returning 1)
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
  return { raw, records, forensic }
}
