// What the user publishes at their own domain to use the hosted record: their record with one
// `include:<hosted>` added, so nothing they already authorise stops passing. Pure text editing on
// top of the RFC 7208 parser, which says where the terms are.

import { MAX_DNS_TERMS } from '../spf/limits.ts'
import { normalizeName } from '../spf/lookups.ts'
import { isSpfRecord, parseSpfRecord } from '../spf/record.ts'

export interface UserRecord {
  /** The SPF record the user should publish at their domain. */
  record: string
  /** false when the published record already includes the hosted name (or cannot be edited). */
  changed: boolean
  /** DNS-querying terms in `record` itself, `include:<hosted>` among them (§4.6.4). */
  lookups: number
  note: string | null
}

// RFC 7208 §4.6.4: the terms that query DNS; redirect only counts when there is no all (§6.1).
const DNS_TERMS = new Set(['include', 'a', 'mx', 'ptr', 'exists'])

/** The user's record with `include:<hosted>` once, before its all; a new record when they have none. */
export function userRecordWithInclude(publishedRecord: string | null, hosted: string): UserRecord {
  const name = normalizeName(hosted)
  const include = `include:${name}`
  const text = publishedRecord?.trim() ?? ''
  const budgetNote = (lookups: number) =>
    `the record spends ${lookups} of the ${MAX_DNS_TERMS} DNS lookups itself (include:${name} is one); the hosted record may use ${MAX_DNS_TERMS - lookups}`
  if (!isSpfRecord(text)) {
    const record = `v=spf1 ${include} -all`
    const prefix = text === '' ? '' : 'the published text is not an SPF record (RFC 7208 §4.5); '
    return { record, changed: true, lookups: 1, note: `${prefix}${budgetNote(1)}` }
  }
  const parsed = parseSpfRecord(text)
  if (!parsed.ok) {
    const { error } = parsed
    const note = `fix the syntax error at '${error.term}' (position ${error.position}) first: ${error.message}`
    return { record: text, changed: false, lookups: 0, note }
  }
  const { record } = parsed
  const count = (r: typeof record) =>
    r.directives.filter((d) => DNS_TERMS.has(d.mechanism.kind)).length + (r.redirect && !r.hasAll ? 1 : 0)
  const present = record.directives.some(
    (d) => d.mechanism.kind === 'include' && normalizeName(d.mechanism.domain.text) === name,
  )
  if (present)
    return { record: text, changed: false, lookups: count(record), note: budgetNote(count(record)) }
  // Before the first all: terms after it are never evaluated (§4.6.2). Without one, after the
  // last mechanism: redirect= is evaluated after every mechanism wherever it is written (§6.1).
  const all = record.directives.find((d) => d.mechanism.kind === 'all')
  const last = record.directives[record.directives.length - 1]
  const at = all?.position ?? (last === undefined ? 6 : last.position + last.text.length)
  const out = all
    ? `${text.slice(0, at)}${include} ${text.slice(at)}`
    : `${text.slice(0, at)} ${include}${text.slice(at)}`
  const lookups = count(record) + 1
  const notes = [budgetNote(lookups)]
  if (all === undefined && record.redirect === null) notes.push('it has no all: end it with -all or ~all')
  if (all !== undefined && (all.qualifier === '+' || all.qualifier === '?')) {
    notes.push(`'${all.text}' lets every other host pass or go neutral: use -all or ~all`)
  }
  return { record: out, changed: true, lookups, note: notes.join('; ') }
}
