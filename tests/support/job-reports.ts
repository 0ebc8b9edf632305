import { sql } from 'drizzle-orm'
import { type Database, rowsOf } from '../../infrastructure/db/database.ts'
import type { intake } from '../../src/compose/ingest.ts'

// Reports for tests of the report job's paths (its thread, its batch, a report process): a
// generated aggregate report of any size with varied records, mailed as one message, and what the
// job stored of it, read back for comparison.

const JOB_REPORT_BEGIN = 1_700_000_000

/**
 * `count` records for `domain` (its own domain, a subdomain and another one as header_from; DKIM,
 * SPF, dispositions and reasons varying by record). `broken` cuts a record off far into the
 * report: a parse failure after hundreds of records, which quarantines the message.
 */
export function jobReport(domain: string, id: string, count: number, broken = false): string {
  const records = Array.from({ length: count }, (_, i) => {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
    const from = i % 3 === 0 ? `mail.${domain}` : i % 3 === 1 ? domain : 'other.example'
    return `<record><row><source_ip>${ip}</source_ip><count>${(i % 7) + 1}</count><policy_evaluated>
<disposition>${i % 5 === 0 ? 'quarantine' : 'none'}</disposition><dkim>${i % 2 ? 'pass' : 'fail'}</dkim><spf>fail</spf>
<reason><type>forwarded</type><comment>c${i % 4}</comment></reason></policy_evaluated></row>
<identifiers><header_from>${from}</header_from><envelope_from>bounce.example</envelope_from></identifiers>
<auth_results><dkim><domain>${from}</domain><selector>s${i % 3}</selector><result>pass</result></dkim>
<spf><domain>bounce.example</domain><result>${i % 2 ? 'pass' : 'softfail'}</result></spf></auth_results></record>`
  })
  const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>Reporter</org_name>
<email>r@reporter.example</email><report_id>${id}</report_id><date_range><begin>${JOB_REPORT_BEGIN}</begin>
<end>${JOB_REPORT_BEGIN + 86_399}</end></date_range></report_metadata><policy_published><domain>${domain}</domain>
<adkim>r</adkim><aspf>s</aspf><p>none</p><pct>100</pct></policy_published>${records.join('')}</feedback>`
  return broken ? xml.replace('<source_ip>10.0.1.44</source_ip>', '<source_ip>10.0.1.44</source>') : xml
}

/** The report as one message to `recipient`, accepted as the HTTP intake would: its id. */
export async function mailJobReport(
  accept: ReturnType<typeof intake>['accept'],
  recipient: string,
  xml: string,
): Promise<string> {
  const raw = `From: r@reporter.example\r\nTo: ${recipient}\r\nSubject: Report\r\nMIME-Version: 1.0\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n`
  const accepted = await accept({ raw: new TextEncoder().encode(raw), recipient, source: 'http' })
  if (!accepted.ok) throw new Error(`accept: ${accepted.failure.code}`)
  return accepted.value.id
}

/** The stored records of an account's report, every column the job computes, in stored order. */
export async function storedRecords(database: Database, accountId: string, reportId: string) {
  return rowsOf<Record<string, unknown>>(
    await database.db.execute(sql`select r.day, r.source_ip, r.count, r.disposition, r.dkim_evaluated,
      r.spf_evaluated, r.reasons, r.header_from, r.envelope_from, r.envelope_to, r.dkim, r.spf, r.dkim_aligned,
      r.spf_aligned, r.dmarc_pass from aggregate_records r join aggregate_reports a on a.id = r.report_id
      where a.account_id = ${accountId} and a.report_id = ${reportId} order by r.id`),
  )
}

/** A message's status and quarantine code. */
export async function messageStatus(database: Database, id: string) {
  return rowsOf<{ status: string; code: string | null }>(
    await database.db.execute(
      sql`select status, quarantine_code as code from ingest_messages where id = ${id}::uuid`,
    ),
  )[0]!
}
