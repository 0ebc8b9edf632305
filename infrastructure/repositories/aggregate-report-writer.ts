import type { AggregateRecord } from '../../domain/reports/aggregate-types.ts'
import {
  type AggregateReportWriter,
  type AggregateWrite,
  type RecordOutcome,
  reportDay,
} from '../../domain/reports/store-aggregate.ts'
import type { Database } from '../db/database.ts'
import { copyRows, type SqlTx, transactionOf } from './sql-tx.ts'

// Raw SQL on purpose: the same statements run on postgres.js and PGlite, and records go in with
// COPY on PostgreSQL (a 100,000-record report is one stream, not thousands of INSERTs).

const RECORD_COLUMNS = [
  'report_id',
  'account_id',
  'domain_id',
  'day',
  'source_ip',
  'count',
  'disposition',
  'dkim_evaluated',
  'spf_evaluated',
  'reasons',
  'header_from',
  'envelope_from',
  'envelope_to',
  'dkim',
  'spf',
  'dkim_aligned',
  'spf_aligned',
  'dmarc_pass',
] as const

class DuplicateContent extends Error {}

function recordRow(
  reportId: number,
  input: AggregateWrite,
  day: string,
  record: AggregateRecord,
  outcome: RecordOutcome,
) {
  return [
    reportId,
    input.accountId,
    input.domainId,
    day,
    record.sourceIp,
    record.count,
    record.disposition,
    record.dkimEvaluated,
    record.spfEvaluated,
    JSON.stringify(record.reasons),
    record.headerFrom,
    record.envelopeFrom,
    record.envelopeTo,
    JSON.stringify(record.dkim),
    JSON.stringify(record.spf),
    outcome.dkimAligned,
    outcome.spfAligned,
    outcome.dmarcPass,
  ]
}

async function insertReport(tx: SqlTx, input: AggregateWrite): Promise<number | null> {
  const m = input.metadata
  const rows = await tx.query<{ id: number }>(
    `insert into aggregate_reports (account_id, domain_id, message_id, reporter_org, reporter_email, report_id,
       policy_domain, begin_at, end_at, content_hash, variant, policy, errors, record_count, message_count)
     values ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8), to_timestamp($9), $10, $11, $12::jsonb, $13::jsonb, 0, 0)
     on conflict do nothing returning id`,
    [
      input.accountId,
      input.domainId,
      input.messageId,
      m.orgName,
      m.email,
      m.reportId,
      m.policy.domain,
      m.begin,
      m.end,
      `pending:${crypto.randomUUID()}`,
      m.variant,
      JSON.stringify(m.policy),
      JSON.stringify(m.errors),
    ],
  )
  // bigint ids arrive as strings from postgres.js.
  return rows[0] === undefined ? null : Number(rows[0].id)
}

async function countDuplicate(tx: SqlTx, input: AggregateWrite, byContent: string | null): Promise<number> {
  const m = input.metadata
  const rows = byContent
    ? await tx.query<{ id: number }>(
        'update aggregate_reports set duplicates_seen = duplicates_seen + 1 where account_id = $1 and content_hash = $2 returning id',
        [input.accountId, byContent],
      )
    : await tx.query<{ id: number }>(
        `update aggregate_reports set duplicates_seen = duplicates_seen + 1
         where account_id = $1 and lower(reporter_org) = lower($2) and report_id = $3 and policy_domain = $4
           and begin_at = to_timestamp($5) and end_at = to_timestamp($6) returning id`,
        [input.accountId, m.orgName, m.reportId, m.policy.domain, m.begin, m.end],
      )
  return Number(rows[0]?.id ?? 0)
}

// One statement, one round trip: the report's figures, the rollups per (domain, day, IP,
// disposition, alignment) and per (domain, day), and the DKIM selectors seen, all from the records
// just written. Data-modifying CTEs run in the same snapshot; the records are read once.
const FINISH = `
with recs as materialized (
  select account_id, domain_id, day, source_ip, count, disposition, dkim_aligned, spf_aligned, dmarc_pass, dkim
  from aggregate_records where report_id = $1
), rollups as (
  insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, reports)
  select account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, sum(count), 1
  from recs group by account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned
  on conflict (domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned)
  do update set messages = daily_rollups.messages + excluded.messages, reports = daily_rollups.reports + 1
  returning 1
), totals as (
  insert into daily_domain_totals (account_id, domain_id, day, messages, dmarc_pass, dkim_aligned, spf_aligned,
    disposition_none, disposition_quarantine, disposition_reject, disposition_other, reports)
  select account_id, domain_id, day, sum(count),
    coalesce(sum(count) filter (where dmarc_pass), 0), coalesce(sum(count) filter (where dkim_aligned), 0),
    coalesce(sum(count) filter (where spf_aligned), 0),
    coalesce(sum(count) filter (where lower(disposition) = 'none'), 0),
    coalesce(sum(count) filter (where lower(disposition) = 'quarantine'), 0),
    coalesce(sum(count) filter (where lower(disposition) = 'reject'), 0),
    coalesce(sum(count) filter (where lower(disposition) not in ('none', 'quarantine', 'reject')), 0), 1
  from recs group by account_id, domain_id, day
  on conflict (domain_id, day) do update set
    messages = daily_domain_totals.messages + excluded.messages,
    dmarc_pass = daily_domain_totals.dmarc_pass + excluded.dmarc_pass,
    dkim_aligned = daily_domain_totals.dkim_aligned + excluded.dkim_aligned,
    spf_aligned = daily_domain_totals.spf_aligned + excluded.spf_aligned,
    disposition_none = daily_domain_totals.disposition_none + excluded.disposition_none,
    disposition_quarantine = daily_domain_totals.disposition_quarantine + excluded.disposition_quarantine,
    disposition_reject = daily_domain_totals.disposition_reject + excluded.disposition_reject,
    disposition_other = daily_domain_totals.disposition_other + excluded.disposition_other,
    reports = daily_domain_totals.reports + 1
  returning 1
), weekly as (
  insert into weekly_failing_sources (account_id, domain_id, week, source_ip, failing)
  select account_id, domain_id, date_trunc('week', day)::date, source_ip, sum(count)
  from recs where not dkim_aligned and not spf_aligned
  group by account_id, domain_id, date_trunc('week', day)::date, source_ip
  on conflict (account_id, week, domain_id, source_ip)
  do update set failing = weekly_failing_sources.failing + excluded.failing
  returning 1
), selectors as (
  insert into dkim_selectors_seen (domain_id, selector, signing_domain, last_seen, messages)
  select r.domain_id, lower(d->>'selector'), lower(d->>'domain'), max(r.day), sum(r.count)
  from recs r, json_array_elements(r.dkim) d
  where coalesce(d->>'selector', '') <> '' and coalesce(d->>'domain', '') <> ''
  group by r.domain_id, lower(d->>'selector'), lower(d->>'domain')
  on conflict (domain_id, selector, signing_domain)
  do update set last_seen = greatest(dkim_selectors_seen.last_seen, excluded.last_seen),
                messages = dkim_selectors_seen.messages + excluded.messages
  returning 1
)
update aggregate_reports set content_hash = $2, record_count = $3, message_count = $4 where id = $1`

async function finish(tx: SqlTx, reportId: number, contentHash: string, records: number, messages: number) {
  try {
    await tx.query(FINISH, [reportId, contentHash, records, messages])
  } catch (error) {
    // The same decompressed content was stored before: a duplicate (rolled back by the caller).
    if ((error as { code?: string }).code === '23505') throw new DuplicateContent()
    throw error
  }
}

export function createAggregateWriter(database: Database): AggregateReportWriter {
  return {
    async write(input) {
      try {
        return await transactionOf(database, async (tx) => {
          const reportId = await insertReport(tx, input)
          if (reportId === null)
            return { status: 'duplicate' as const, reportId: await countDuplicate(tx, input, null) }
          const day = reportDay(input.metadata.begin)
          let records = 0
          let messages = 0
          async function* rows() {
            for await (const record of input.records) {
              records++
              messages += record.count
              yield recordRow(reportId!, input, day, record, input.evaluate(record))
            }
          }
          await copyRows(tx, 'aggregate_records', RECORD_COLUMNS, rows())
          // The rollup of a large report groups all its rows: in memory, not in temporary files.
          if (records > 10_000) await tx.query("set local work_mem = '64MB'")
          await finish(tx, reportId, input.contentHash(), records, messages)
          return { status: 'stored' as const, reportId, records, messages }
        })
      } catch (error) {
        if (!(error instanceof DuplicateContent)) throw error
        const reportId = await transactionOf(database, (tx) => countDuplicate(tx, input, input.contentHash()))
        return { status: 'duplicate', reportId }
      }
    },
  }
}
