// Finding a domain's SPF record (RFC 7208 §4.4, §4.5) through the DNS port.

import type { DnsAnswer, DnsResolver } from '../dns/ports.ts'
import { describeFailure, isFailure, query } from './lookups.ts'
import { isSpfRecord, joinTxtStrings, type SpfRecord, type SpfSyntaxError } from './record.ts'
import { sharedRecordCache } from './record-cache.ts'

export type FetchedRecord =
  | { ok: true; record: SpfRecord }
  | {
      ok: false
      result: 'none' | 'permerror' | 'temperror'
      reason: string
      /** Set when the record exists but has a syntax error. */
      text?: string
      error?: SpfSyntaxError
      /** Set when several SPF records were found. */
      records?: string[]
    }

export function fetchSpfRecord(dns: DnsResolver, domain: string): Promise<FetchedRecord> {
  // §4.4: only TXT is queried; the SPF RR type is no longer used. (.then, not async: one promise
  // fewer on every record fetched.)
  return query(dns, domain, 'TXT').then((answer) => recordFrom(domain, answer))
}

function recordFrom(domain: string, answer: DnsAnswer): FetchedRecord {
  if (isFailure(answer)) {
    return { ok: false, result: 'temperror', reason: describeFailure(answer, domain, 'TXT') }
  }
  if (answer.status !== 'ok') {
    const reason = `${domain} has no SPF record (${answer.status === 'nxdomain' ? 'NXDOMAIN' : 'no TXT records'})`
    return { ok: false, result: 'none', reason }
  }
  // selectSpfRecords, in one pass over the answer.
  const records: string[] = []
  for (const r of answer.records) {
    if (r.type !== 'TXT') continue
    const joined = joinTxtStrings(r.strings)
    if (isSpfRecord(joined)) records.push(joined)
  }
  const [text, ...others] = records
  if (text === undefined) return { ok: false, result: 'none', reason: `${domain} has no SPF record` }
  if (others.length > 0) {
    // §4.5: more than one v=spf1 record is a permerror, even when they are identical.
    const reason = `${domain} has ${records.length} SPF records (RFC 7208 §4.5)`
    return { ok: false, result: 'permerror', reason, records }
  }
  // Parsed once per distinct text (record-cache.ts); the record is shared and frozen.
  const parsed = sharedRecordCache.parse(text)
  if (!parsed.ok) {
    const { error } = parsed
    const reason = `syntax error in the SPF record of ${domain} at '${error.term}' (position ${error.position}): ${error.message}`
    return { ok: false, result: 'permerror', reason, text, error }
  }
  return { ok: true, record: parsed.record }
}
