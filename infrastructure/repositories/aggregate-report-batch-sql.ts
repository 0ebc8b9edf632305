import {
  compile,
  ENDED_MONTH,
  ROLLUP_UPSERT,
  SELECTORS_UPSERT,
  STALE_MONTH_UPSERT,
  TOTALS_UPSERT,
  WEEKLY_UPSERT,
} from './aggregate-report-sql.ts'

// A batch of small reports in one statement (aggregate-report-batch.ts): STORE_SMALL's parts
// (aggregate-report-sql.ts) for many reports at once, every value an array parameter tagged with
// its report's place in the batch (`ord`). Reports of one batch may share rollup rows (a domain's
// day, an IP, a selector), and one INSERT ... ON CONFLICT DO UPDATE may not touch a row twice, so
// the figures are summed per row first (GROUP BY), and go in key order like the one-report path's.

const merged = (column: string) =>
  // One report's evidence as it is (as STORE_SMALL stores it); several reports' united, sorted
  // and bounded like the conflict update's union.
  `case when count(*) = 1 then string_to_array(min(u.${column}), ' ')
    else array(select distinct d from unnest(string_to_array(string_agg(u.${column}, ' '), ' ')) d
      where d <> '' order by d limit 8) end`

/**
 * Reports first, in identity order (two batches storing the same report wait for each other in
 * the same order); a duplicate, of a stored report or of an earlier one in the batch (same
 * identity or content: both unique indexes), inserts nothing. `stored` maps the inserted rows back
 * to their place: by content, the first place of that content (identical content has identical
 * identity, so which of two identical reports is kept does not matter).
 */
export const STORE_BATCH = compile(`with input as (
  select * from unnest(@ord::int[], @account::uuid[], @domain::bigint[], @message::uuid[], @org::text[],
    @email::text[], @reportIdText::text[], @policyDomain::text[], @begin::bigint[], @end::bigint[],
    @contentHash::text[], @variant::text[], @policy::jsonb[], @errors::jsonb[], @day::date[], @records::int[],
    @totalMessages::bigint[], @dmarcPass::bigint[], @totalDkimAligned::bigint[], @totalSpfAligned::bigint[],
    @none::bigint[], @quarantine::bigint[], @reject::bigint[], @other::bigint[])
    as i(ord, account, domain, message, org, email, report_id, policy_domain, begin_at, end_at, content_hash,
      variant, policy, errors, day, records, messages, dmarc_pass, dkim_aligned, spf_aligned,
      d_none, d_quarantine, d_reject, d_other)
), report as (
  insert into aggregate_reports (account_id, domain_id, message_id, reporter_org, reporter_email, report_id,
    policy_domain, begin_at, end_at, content_hash, variant, policy, errors, record_count, message_count, received_at)
  select i.account, i.domain, i.message, i.org, i.email, i.report_id, i.policy_domain, to_timestamp(i.begin_at),
    to_timestamp(i.end_at), i.content_hash, i.variant, i.policy, i.errors, i.records, i.messages,
    coalesce((select m.received_at from ingest_messages m where m.id = i.message), now())
  from input i
  order by i.account, lower(i.org), i.report_id, i.policy_domain, i.begin_at, i.end_at, i.ord
  on conflict do nothing returning id, account_id, content_hash
), stored as (
  select distinct on (i.account, i.content_hash) i.*, r.id
  from input i join report r on r.account_id = i.account and r.content_hash = i.content_hash
  order by i.account, i.content_hash, i.ord
), records as (
  insert into aggregate_records (report_id, account_id, domain_id, day, source_ip, count, disposition, dkim_evaluated,
    spf_evaluated, reasons, header_from, envelope_from, envelope_to, dkim, spf, dkim_aligned, spf_aligned, dmarc_pass)
  select s.id, s.account, s.domain, s.day, r.ip, r.count, r.disposition, r.dkim_evaluated, r.spf_evaluated, r.reasons,
    r.header_from, r.envelope_from, r.envelope_to, r.dkim, r.spf, r.dkim_aligned, r.spf_aligned, r.dmarc_pass
  from stored s join unnest(@rOrd::int[], @rIp::inet[], @rCount::int[], @rDisposition::text[], @rDkimEvaluated::text[],
    @rSpfEvaluated::text[], @rReasons::json[], @rHeaderFrom::text[], @rEnvelopeFrom::text[], @rEnvelopeTo::text[],
    @rDkim::json[], @rSpf::json[], @rDkimAligned::bool[], @rSpfAligned::bool[], @rDmarcPass::bool[])
    as r(ord, ip, count, disposition, dkim_evaluated, spf_evaluated, reasons, header_from, envelope_from, envelope_to,
      dkim, spf, dkim_aligned, spf_aligned, dmarc_pass) on r.ord = s.ord
), rollups as (
  insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned,
    messages, spf_pass, dkim_pass, forwarded, dkim_domains, spf_domains, reports)
  select s.account, s.domain, s.day, u.ip, u.disposition, u.dkim, u.spf, sum(u.messages), sum(u.spf_pass),
    sum(u.dkim_pass), sum(u.forwarded), ${merged('dkim_domains')}, ${merged('spf_domains')}, count(*)
  from stored s join unnest(@sOrd::int[], @ips::inet[], @dispositions::text[], @dkimAligned::bool[],
    @spfAligned::bool[], @messages::bigint[], @spfPass::bigint[], @dkimPass::bigint[], @forwarded::bigint[],
    @dkimDomains::text[], @spfDomains::text[])
    as u(ord, ip, disposition, dkim, spf, messages, spf_pass, dkim_pass, forwarded, dkim_domains, spf_domains)
    on u.ord = s.ord
  group by s.account, s.domain, s.day, u.ip, u.disposition, u.dkim, u.spf
  order by s.domain, s.day, u.ip, u.disposition, u.dkim, u.spf
  ${ROLLUP_UPSERT}
), totals as (
  insert into daily_domain_totals (account_id, domain_id, day, messages, dmarc_pass, dkim_aligned, spf_aligned,
    disposition_none, disposition_quarantine, disposition_reject, disposition_other, reports)
  select s.account, s.domain, s.day, sum(s.messages), sum(s.dmarc_pass), sum(s.dkim_aligned), sum(s.spf_aligned),
    sum(s.d_none), sum(s.d_quarantine), sum(s.d_reject), sum(s.d_other), count(*)
  from stored s where s.records > 0
  group by s.account, s.domain, s.day
  order by s.domain, s.day
  ${TOTALS_UPSERT}
), weekly as (
  insert into weekly_failing_sources (account_id, domain_id, week, source_ip, failing)
  select s.account, s.domain, date_trunc('week', s.day)::date, u.ip, sum(u.messages)
  from stored s join unnest(@fOrd::int[], @failingIps::inet[], @failingMessages::bigint[]) as u(ord, ip, messages)
    on u.ord = s.ord
  group by s.account, s.domain, date_trunc('week', s.day)::date, u.ip
  order by s.domain, date_trunc('week', s.day)::date, u.ip
  ${WEEKLY_UPSERT}
), selectors as (
  insert into dkim_selectors_seen (domain_id, selector, signing_domain, last_seen, messages)
  select s.domain, u.selector, u.signing_domain, max(s.day), sum(u.messages)
  from stored s join unnest(@selOrd::int[], @selectors::text[], @signingDomains::text[], @selectorMessages::bigint[])
    as u(ord, selector, signing_domain, messages) on u.ord = s.ord
  group by s.domain, u.selector, u.signing_domain
  order by s.domain, u.selector, u.signing_domain
  ${SELECTORS_UPSERT}
), late as (
  -- Reports of months that have ended mark them stale, as one report does (figureCtes).
  insert into monthly_rollup_builds (account_id, month, built_at, stale)
  select s.account, date_trunc('month', s.day::timestamp)::date, null::timestamptz, true
  from stored s where ${ENDED_MONTH('s.day')}
  group by s.account, date_trunc('month', s.day::timestamp)::date
  order by s.account, date_trunc('month', s.day::timestamp)::date
  ${STALE_MONTH_UPSERT}
)
select ord, id, records, messages from stored`)
