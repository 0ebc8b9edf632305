import type { AggregateRecord } from '../../domain/reports/aggregate-types.ts'
import {
  failingSources,
  type ReportTotals,
  type SelectorSeen,
  type SourceRollup,
} from '../../domain/reports/report-rollup.ts'
import type { AggregateWrite, RecordOutcome } from '../../domain/reports/store-aggregate.ts'
import { pgArray } from './sql-tx.ts'

// The statements that store an aggregate report. Written with @name placeholders, compiled once to
// $n, so one statement text (prepared once per connection) serves every report. Arrays travel as
// array literals: the same text on postgres.js and PGlite, and one parameter however many values.

export interface Compiled {
  text: string
  order: string[]
}

/** `@name` → `$n` by first appearance (PostgreSQL's own `::casts` are left alone). */
export function compile(text: string): Compiled {
  const order: string[] = []
  const out = text.replace(/@([a-zA-Z]\w*)/g, (_, name: string) => {
    let index = order.indexOf(name)
    if (index === -1) index = order.push(name) - 1
    return `$${index + 1}`
  })
  return { text: out, order }
}

export function bind(compiled: Compiled, values: Record<string, unknown>): unknown[] {
  return compiled.order.map((name) => {
    if (!(name in values)) throw new Error(`no value for @${name}`)
    return values[name]
  })
}

const union = (column: string) =>
  `array(select distinct d from unnest(daily_rollups.${column} || excluded.${column}) d order by d limit 8)`

// How each figure adds to the row already there: shared by the one-report statements below and
// the batch statement (aggregate-report-batch-sql.ts), so the two paths cannot drift apart. The
// inserted row carries the report count it adds (1 for one report, the batch's count for a batch).
export const ROLLUP_UPSERT = `on conflict (domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned) do update set
    messages = daily_rollups.messages + excluded.messages,
    spf_pass = daily_rollups.spf_pass + excluded.spf_pass,
    dkim_pass = daily_rollups.dkim_pass + excluded.dkim_pass,
    forwarded = daily_rollups.forwarded + excluded.forwarded,
    dkim_domains = ${union('dkim_domains')},
    spf_domains = ${union('spf_domains')},
    reports = daily_rollups.reports + excluded.reports`
export const TOTALS_UPSERT = `on conflict (domain_id, day) do update set
    messages = daily_domain_totals.messages + excluded.messages,
    dmarc_pass = daily_domain_totals.dmarc_pass + excluded.dmarc_pass,
    dkim_aligned = daily_domain_totals.dkim_aligned + excluded.dkim_aligned,
    spf_aligned = daily_domain_totals.spf_aligned + excluded.spf_aligned,
    disposition_none = daily_domain_totals.disposition_none + excluded.disposition_none,
    disposition_quarantine = daily_domain_totals.disposition_quarantine + excluded.disposition_quarantine,
    disposition_reject = daily_domain_totals.disposition_reject + excluded.disposition_reject,
    disposition_other = daily_domain_totals.disposition_other + excluded.disposition_other,
    reports = daily_domain_totals.reports + excluded.reports`
export const WEEKLY_UPSERT = `on conflict (account_id, week, domain_id, source_ip)
  do update set failing = weekly_failing_sources.failing + excluded.failing`
export const SELECTORS_UPSERT = `on conflict (domain_id, selector, signing_domain)
  do update set last_seen = greatest(dkim_selectors_seen.last_seen, excluded.last_seen),
                messages = dkim_selectors_seen.messages + excluded.messages`
// A report for a month that has ended marks the account's month stale, so the summaries stop
// reading its monthly rollups until the nightly build redoes them (pg-monthly-rollups.ts). A report
// of the current month, nearly every one, inserts nothing.
export const ENDED_MONTH = (day: string) =>
  `date_trunc('month', ${day}::timestamp) < date_trunc('month', now() at time zone 'UTC')`
export const STALE_MONTH_UPSERT =
  'on conflict (account_id, month) do update set stale = true where not monthly_rollup_builds.stale'

/**
 * The figures a report adds: rollups per (domain, day, IP, disposition, alignment), the domain's
 * day, the week's failing sources and the DKIM selectors seen (and, for a month that has ended,
 * its monthly rollups marked stale), all accumulated in memory while the
 * records streamed (domain/reports/report-rollup.ts), so the records are never read back. `gate`
 * joins a CTE that yields a row only when the report was inserted (the one-statement path).
 * `perSource` false leaves out the two per-source parts (the rollups and the week's failing
 * sources): a large report writes them to rollup_pending instead, merged after its commit
 * (aggregate-report-merge.ts).
 */
function figureCtes(gate: string, perSource: boolean): string {
  const from = gate === '' ? 'from' : `from ${gate},`
  const sources = `unnest(@ips::inet[], @dispositions::text[], @dkimAligned::bool[], @spfAligned::bool[], @messages::bigint[],
    @spfPass::bigint[], @dkimPass::bigint[], @forwarded::bigint[], @dkimDomains::text[], @spfDomains::text[])
    as u(ip, disposition, dkim, spf, messages, spf_pass, dkim_pass, forwarded, dkim_domains, spf_domains)`
  const failing = 'unnest(@failingIps::inet[], @failingMessages::bigint[]) as u(ip, messages)'
  const perSourceCtes = perSource ? `${rollupsCte(from, sources)}, ${weeklyCte(from, failing)},` : ''
  return `${perSourceCtes}
totals as (
  insert into daily_domain_totals (account_id, domain_id, day, messages, dmarc_pass, dkim_aligned, spf_aligned,
    disposition_none, disposition_quarantine, disposition_reject, disposition_other, reports)
  select @account, @domain, @day::date, @totalMessages, @dmarcPass, @totalDkimAligned, @totalSpfAligned,
    @none, @quarantine, @reject, @other, 1
  ${gate === '' ? '' : `from ${gate}`} where @records::int > 0
  ${TOTALS_UPSERT}
), selectors as (
  insert into dkim_selectors_seen (domain_id, selector, signing_domain, last_seen, messages)
  select @domain, u.selector, u.signing_domain, @day::date, u.messages
  ${from} unnest(@selectors::text[], @signingDomains::text[], @selectorMessages::bigint[]) as u(selector, signing_domain, messages)
  order by u.selector, u.signing_domain
  ${SELECTORS_UPSERT}
), late as (
  ${lateInsert(gate === '' ? '' : `from ${gate}`)}
)`
}

// Every upsert below goes in key order: a B-tree takes sorted insertions faster than random ones
// (measured on 100,000 new rollup rows: 0.66-1.0 s against 1.28 s; the sort costs PostgreSQL
// ~50 ms), and two reports stored at once that share rows (a domain's day, week or selectors)
// lock them in the same order, so one waits for the other instead of deadlocking.

/** Whose figures a statement writes: SQL expressions for the account, the domain and the day. */
export interface FigureOwner {
  account: string
  domain: string
  day: string
}

/** The report's own parameters (the one-report statements). */
const REPORT_OWNER: FigureOwner = { account: '@account', domain: '@domain', day: '@day::date' }

/** The rollup rows of `sources` (columns ip, disposition, dkim, spf, the figures, the evidence). */
export function rollupsCte(from: string, sources: string, owner: FigureOwner = REPORT_OWNER) {
  return `rollups as (
  insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned,
    messages, spf_pass, dkim_pass, forwarded, dkim_domains, spf_domains, reports)
  select ${owner.account}, ${owner.domain}, ${owner.day}, u.ip, u.disposition, u.dkim, u.spf, u.messages, u.spf_pass,
    u.dkim_pass, u.forwarded, string_to_array(u.dkim_domains, ' '), string_to_array(u.spf_domains, ' '), 1
  ${from} ${sources} order by u.ip, u.disposition, u.dkim, u.spf
  ${ROLLUP_UPSERT}
)`
}

/** The week's failing sources of `failing` (columns ip, messages). */
export function weeklyCte(from: string, failing: string, owner: FigureOwner = REPORT_OWNER) {
  return `weekly as (
  insert into weekly_failing_sources (account_id, domain_id, week, source_ip, failing)
  select ${owner.account}, ${owner.domain}, date_trunc('week', ${owner.day})::date, u.ip, u.messages
  ${from} ${failing} order by u.ip
  ${WEEKLY_UPSERT}
)`
}

/** The month of the owner's day marked stale when it has ended (`from`: the rows that gate it). */
export function lateInsert(from: string, owner: Pick<FigureOwner, 'account' | 'day'> = REPORT_OWNER) {
  return `insert into monthly_rollup_builds (account_id, month, built_at, stale)
  select ${owner.account}, date_trunc('month', ${owner.day}::timestamp)::date, null::timestamptz, true
  ${from}
  where ${ENDED_MONTH(owner.day)}
  ${STALE_MONTH_UPSERT}`
}

// received_at is when the report's message arrived (its intake, or the IMAP server's INTERNALDATE:
// docs/ingestion.md), not when this job stores it; without a message, now.
const REPORT_ROW = `insert into aggregate_reports (account_id, domain_id, message_id, reporter_org, reporter_email,
    report_id, policy_domain, begin_at, end_at, content_hash, variant, policy, errors, record_count, message_count,
    received_at)
  values (@account, @domain, @message::uuid, @org, @email, @reportIdText, @policyDomain, to_timestamp(@begin),
    to_timestamp(@end), @contentHash, @variant, @policy::jsonb, @errors::jsonb, @records, @totalMessages,
    coalesce((select m.received_at from ingest_messages m where m.id = @message::uuid), now()))
  on conflict do nothing returning id`

/** Large reports: the report row first (figures zero until FINISH), then COPY, then FINISH. */
export const INSERT_REPORT = compile(REPORT_ROW.replace('@records, @totalMessages', '0, 0'))

/**
 * Large reports: after the COPY of the records and of the sources into rollup_pending, in the same
 * transaction: everything but the per-source parts, merged after the commit.
 */
export const FINISH = compile(`with ${figureCtes('', false)}
update aggregate_reports set content_hash = @contentHash, record_count = @records, message_count = @totalMessages
where id = @reportId`)

/**
 * Small reports (most of them): the report row, its records and every figure in one statement,
 * atomic without BEGIN/COMMIT round trips. A duplicate (by identity or content: both unique
 * indexes) inserts nothing, and the gate makes every other part insert nothing too.
 */
export const STORE_SMALL = compile(`with report as (
  ${REPORT_ROW}
), records as (
  insert into aggregate_records (report_id, account_id, domain_id, day, source_ip, count, disposition, dkim_evaluated,
    spf_evaluated, reasons, header_from, envelope_from, envelope_to, dkim, spf, dkim_aligned, spf_aligned, dmarc_pass)
  select report.id, @account, @domain, @day::date, r.*
  from report, unnest(@rIp::inet[], @rCount::int[], @rDisposition::text[], @rDkimEvaluated::text[],
    @rSpfEvaluated::text[], @rReasons::json[], @rHeaderFrom::text[], @rEnvelopeFrom::text[], @rEnvelopeTo::text[],
    @rDkim::json[], @rSpf::json[], @rDkimAligned::bool[], @rSpfAligned::bool[], @rDmarcPass::bool[]) as r
), ${figureCtes('report', true)}
select id from report`)

export function metadataValues(
  input: Pick<AggregateWrite, 'accountId' | 'domainId' | 'messageId' | 'metadata'>,
): Record<string, unknown> {
  const m = input.metadata
  return {
    account: input.accountId,
    domain: input.domainId,
    message: input.messageId,
    org: m.orgName,
    email: m.email,
    reportIdText: m.reportId,
    policyDomain: m.policy.domain,
    begin: m.begin,
    end: m.end,
    variant: m.variant,
    policy: JSON.stringify(m.policy),
    errors: JSON.stringify(m.errors),
  }
}

/** Totals and selectors: a few values whatever the report's size. */
export function totalValues(totals: ReportTotals, selectors: SelectorSeen[]): Record<string, unknown> {
  return {
    records: totals.records,
    totalMessages: totals.messages,
    dmarcPass: totals.dmarcPass,
    totalDkimAligned: totals.dkimAligned,
    totalSpfAligned: totals.spfAligned,
    none: totals.dispositionNone,
    quarantine: totals.dispositionQuarantine,
    reject: totals.dispositionReject,
    other: totals.dispositionOther,
    selectors: pgArray(selectors.map((s) => s.selector)),
    signingDomains: pgArray(selectors.map((s) => s.signingDomain)),
    selectorMessages: pgArray(selectors.map((s) => s.messages)),
  }
}

/** The sources as array parameters (small reports). */
export function sourceValues(sources: SourceRollup[]): Record<string, unknown> {
  const failing = failingSources(sources)
  return {
    ips: pgArray(sources.map((s) => s.sourceIp)),
    dispositions: pgArray(sources.map((s) => s.disposition)),
    dkimAligned: pgArray(sources.map((s) => s.dkimAligned)),
    spfAligned: pgArray(sources.map((s) => s.spfAligned)),
    messages: pgArray(sources.map((s) => s.messages)),
    spfPass: pgArray(sources.map((s) => s.spfPass)),
    dkimPass: pgArray(sources.map((s) => s.dkimPass)),
    forwarded: pgArray(sources.map((s) => s.forwarded)),
    dkimDomains: pgArray(sources.map((s) => s.dkimDomains.join(' '))),
    spfDomains: pgArray(sources.map((s) => s.spfDomains.join(' '))),
    failingIps: pgArray(failing.map((f) => f.sourceIp)),
    failingMessages: pgArray(failing.map((f) => f.messages)),
  }
}

/** The records of a small report, column by column, for STORE_SMALL's unnest. */
export function recordValues(records: [AggregateRecord, RecordOutcome][]): Record<string, unknown> {
  const column = <T extends string | number | boolean | null>(
    pick: (r: AggregateRecord, o: RecordOutcome) => T,
  ) => pgArray(records.map(([r, o]) => pick(r, o)))
  return {
    rIp: column((r) => r.sourceIp),
    rCount: column((r) => r.count),
    rDisposition: column((r) => r.disposition),
    rDkimEvaluated: column((r) => r.dkimEvaluated),
    rSpfEvaluated: column((r) => r.spfEvaluated),
    rReasons: column((r) => JSON.stringify(r.reasons)),
    rHeaderFrom: column((r) => r.headerFrom),
    rEnvelopeFrom: column((r) => r.envelopeFrom),
    rEnvelopeTo: column((r) => r.envelopeTo),
    rDkim: column((r) => JSON.stringify(r.dkim)),
    rSpf: column((r) => JSON.stringify(r.spf)),
    rDkimAligned: column((_, o) => o.dkimAligned),
    rSpfAligned: column((_, o) => o.spfAligned),
    rDmarcPass: column((_, o) => o.dmarcPass),
  }
}
