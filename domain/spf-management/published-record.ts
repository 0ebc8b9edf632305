// The user's own SPF record and how it relates to the hosted one: what activation copies into the
// hosted record by default, what the user publishes afterwards (their record with the copied terms
// replaced by one `include:<hosted>`), and a single term added to an unmanaged record.

import type { DnsResolver } from '../dns/ports.ts'
import { fetchSpfRecord } from '../spf/fetch-record.ts'
import { formatIp } from '../spf/ip.ts'
import { normalizeName } from '../spf/lookups.ts'
import { hasMacros } from '../spf/macro.ts'
import { type Directive, isSpfRecord, parseSpfRecord, type SpfRecord } from '../spf/record.ts'
import type { ManagedSpfConfig } from './managed-record.ts'
import { type ManagedSource, normalizeSource, sourceKey, sourceTerm } from './sources.ts'
import { type UserRecord, userRecordWithInclude } from './user-record.ts'

export interface PublishedSpf {
  /** ok: one parseable record; none; permerror: several or a syntax error; temperror: DNS failed. */
  status: 'ok' | 'none' | 'permerror' | 'temperror'
  /** The record as published (also when it has a syntax error); null when none or several. */
  record: string | null
  reason: string | null
}

export async function readPublished(dns: DnsResolver, domain: string): Promise<PublishedSpf> {
  const fetched = await fetchSpfRecord(dns, domain)
  if (fetched.ok) return { status: 'ok', record: fetched.record.text, reason: null }
  return { status: fetched.result, record: fetched.text ?? null, reason: fetched.reason }
}

/** The hosted-record source a directive stands for, when it can move into the hosted record. */
function movableSource(directive: Directive, domain: string, zone: string): ManagedSource | null {
  const m = directive.mechanism
  let source: ManagedSource | null = null
  if (m.kind === 'ip4' || m.kind === 'ip6') {
    const address = formatIp(m.address)
    source = { kind: m.kind, network: m.prefix === null ? address : `${address}/${m.prefix}` }
  } else if (m.kind === 'include' && !hasMacros(m.domain.tokens)) {
    source = { kind: 'include', domain: m.domain.text }
  } else if ((m.kind === 'a' || m.kind === 'mx') && m.cidr4 === null && m.cidr6 === null) {
    // Inside the hosted record a bare `a` would mean the hosted name: write the user's domain out.
    if (m.domain === null) source = { kind: m.kind, domain }
    else if (!hasMacros(m.domain.tokens)) source = { kind: m.kind, domain: m.domain.text }
  }
  if (source === null) return null
  const checked = normalizeSource(source, zone)
  return checked.ok ? checked.source : null
}

/**
 * The directives that can move into the hosted record without changing any result: `+` terms of
 * the kinds a managed source has (no macros, no dual-cidr), up to the first directive with another
 * qualifier. Past that point moving a term behind, say, `-ip4:x` would change what x gets.
 */
function movable(
  record: SpfRecord,
  domain: string,
  zone: string,
): { directive: Directive; source: ManagedSource }[] {
  const out: { directive: Directive; source: ManagedSource }[] = []
  for (const directive of record.directives) {
    if (directive.qualifier !== '+' || directive.mechanism.kind === 'all') break
    const source = movableSource(directive, normalizeName(domain), normalizeName(zone))
    if (source !== null) out.push({ directive, source })
  }
  return out
}

const parsed = (record: string | null): SpfRecord | null => {
  if (record === null || !isSpfRecord(record.trim())) return null
  const result = parseSpfRecord(record.trim())
  return result.ok ? result.record : null
}

/** Activation's default sources: the published record's movable terms, so nobody's result changes. */
export function defaultSources(record: string | null, domain: string, zone: string): ManagedSource[] {
  const spf = parsed(record)
  return spf === null ? [] : movable(spf, domain, zone).map((m) => m.source)
}

/** Activation's default `all`: the published record's softfail stays a softfail. */
export function defaultAll(record: string | null): ManagedSpfConfig['all'] {
  const all = parsed(record)?.directives.find((d) => d.mechanism.kind === 'all')
  return all?.qualifier === '~' ? '~all' : '-all'
}

/**
 * What the user publishes at their domain: their record without the terms the hosted record now
 * holds, plus `include:<hosted>` (see `userRecordWithInclude`). `changed` compares with what is
 * published now; `lookups - 1` is what the user's record spends outside the hosted one.
 */
export function recordToPublish(
  published: string | null,
  input: { hosted: string; config: ManagedSpfConfig; domain: string; zone: string },
): UserRecord {
  const spf = parsed(published)
  if (spf === null) return userRecordWithInclude(published, input.hosted)
  const held = new Set(input.config.sources.map(sourceKey))
  const moved = new Set(
    movable(spf, input.domain, input.zone)
      .filter((m) => held.has(sourceKey(m.source)))
      .map((m) => m.directive),
  )
  const kept = spf.terms.filter((term) => term.type !== 'directive' || !moved.has(term))
  const stripped = [spf.text.slice(0, 6), ...kept.map((term) => term.text)].join(' ')
  const result = userRecordWithInclude(stripped, input.hosted)
  return { ...result, changed: result.record !== spf.text }
}

/** What the DNS-querying terms outside the hosted record cost: the hosted record's budget is 9 - this. */
export function outsideLookups(user: UserRecord): number {
  return Math.min(9, Math.max(0, user.lookups - 1))
}

/**
 * An unmanaged domain's record with one more source: the term goes before the first `all` (terms
 * after it are never evaluated, RFC 7208 §4.6.2), or after the last mechanism. Without a record the
 * new one ends in `~all`: nothing else is known to send for the domain, so softfail until it is.
 */
export function recordWithSource(published: string | null, source: ManagedSource): UserRecord {
  const term = sourceTerm(source)
  const spf = parsed(published)
  if (spf === null) {
    const broken = published !== null && isSpfRecord(published.trim())
    if (broken)
      return { record: published!.trim(), changed: false, lookups: 0, note: 'fix the syntax error first' }
    const note = 'no SPF record is published: once every sender is listed, end the record with -all'
    return {
      record: `v=spf1 ${term} ~all`,
      changed: true,
      lookups: source.kind === 'ip4' || source.kind === 'ip6' ? 0 : 1,
      note,
    }
  }
  const key = sourceKey(source)
  const lookups = spf.directives.filter((d) =>
    ['include', 'a', 'mx', 'ptr', 'exists'].includes(d.mechanism.kind),
  ).length
  const present = spf.directives.some((d) => {
    if (d.qualifier !== '+') return false
    const m = d.mechanism
    if (m.kind === 'ip4' || m.kind === 'ip6') {
      const address = formatIp(m.address)
      return (
        sourceKey({ kind: m.kind, network: m.prefix === null ? address : `${address}/${m.prefix}` }) === key
      )
    }
    return m.kind === 'include' && sourceKey({ kind: 'include', domain: m.domain.text }) === key
  })
  if (present) return { record: spf.text, changed: false, lookups, note: `${term} is already in the record` }
  const all = spf.directives.find((d) => d.mechanism.kind === 'all')
  const last = spf.directives[spf.directives.length - 1]
  const at = all?.position ?? (last === undefined ? 6 : last.position + last.text.length)
  const text = all
    ? `${spf.text.slice(0, at)}${term} ${spf.text.slice(at)}`
    : `${spf.text.slice(0, at)} ${term}${spf.text.slice(at)}`
  const added = source.kind === 'ip4' || source.kind === 'ip6' ? 0 : 1
  return { record: text, changed: true, lookups: lookups + added, note: null }
}
