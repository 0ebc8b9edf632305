// check_host() (RFC 7208 §4) over the DNS port. Every SPF outcome, including DNS failures and
// broken records, is returned as a value; processing limits (§4.6.4) bound the work, so loops end
// in permerror rather than recursion without end.

import type { DnsResolver } from '../dns/ports.ts'
import { explain } from './explanation.ts'
import { fetchSpfRecord } from './fetch-record.ts'
import { inNetwork, parseIp, unmapIpv4 } from './ip.ts'
import {
  chargeLookup,
  evaluateDnsMechanism,
  type Match,
  type Outcome,
  permerror,
  type Session,
  targetName,
} from './mechanisms.ts'
import type { Directive, Mechanism, Qualifier } from './record.ts'

export type SpfResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'permerror' | 'temperror'

export interface CheckHostDeps {
  dns: DnsResolver
}

export interface CheckHostInput {
  /** The client IP; an IPv4-mapped IPv6 address is checked as IPv4 (RFC 7208 §5). */
  ip: string
  /** The domain to check: the MAIL FROM domain, or the HELO name (RFC 7208 §2.3, §2.4). */
  domain: string
  /** MAIL FROM, or postmaster@<helo>; a missing local-part becomes "postmaster" (§4.3). */
  sender: string
  helo: string
  /** The `r` macro (§7.3). */
  receivingHost?: string
  /** The `t` macro (§7.3). */
  now: Date
  /** Explanation used for a fail without a usable exp= (§6.2); a macro string. */
  defaultExplanation?: string
}

export interface CheckHostResult {
  result: SpfResult
  /** Only for `fail` (§6.2). */
  explanation?: string
  /** The directive that decided the result, as written. */
  mechanism?: string
  /** Why, for none/neutral defaults, permerror and temperror. */
  reason?: string
  /** DNS-querying terms evaluated (§4.6.4 limit: 10). */
  lookups: number
  voidLookups: number
}

const QUALIFIER_RESULT: Record<Qualifier, SpfResult> = {
  '+': 'pass',
  '-': 'fail',
  '~': 'softfail',
  '?': 'neutral',
}

function matchWithoutDns(s: Session, m: Mechanism): Match {
  if (m.kind !== 'ip4' && m.kind !== 'ip6') return 'match'
  return inNetwork(s.ip, m.address, m.prefix ?? (m.kind === 'ip4' ? 32 : 128)) ? 'match' : 'nomatch'
}

async function evaluateMechanism(s: Session, directive: Directive, domain: string): Promise<Match> {
  const m = directive.mechanism
  const term = directive.text
  switch (m.kind) {
    case 'all':
    case 'ip4':
    case 'ip6':
      return matchWithoutDns(s, m)
  }
  const charged = chargeLookup(s, term)
  if (charged !== null) return charged
  const target = await targetName(s, m.domain, domain, term)
  if (typeof target === 'object' && target !== null) return target
  if (m.kind === 'include') {
    // §5.2: an include whose target does not exist evaluates to "none", which is a permerror.
    if (target === null)
      return permerror(`include target '${m.domain.text}' is not a valid domain name`, term)
    const inner = await evaluate(s, target)
    switch (inner.result) {
      case 'pass':
        return 'match'
      case 'fail':
      case 'softfail':
      case 'neutral':
        return 'nomatch'
      case 'none':
        return permerror(`included domain ${target} has no SPF record (RFC 7208 §5.2)`, term)
      default:
        return { ...inner, mechanism: inner.mechanism ?? term }
    }
  }
  // §4.3 / test suite: a target that cannot be a DNS name does not match (no query is made).
  if (target === null) return 'nomatch'
  return evaluateDnsMechanism(s, directive, target)
}

/** check_host() for one domain: fetch, parse, evaluate directives, then redirect (§4.6-§4.7, §6.1). */
async function evaluate(s: Session, domain: string): Promise<Outcome> {
  const fetched = await fetchSpfRecord(s.dns, domain)
  if (!fetched.ok) return { result: fetched.result, reason: fetched.reason }
  const record = fetched.record
  for (const directive of record.directives) {
    // all, ip4 and ip6 need no DNS: decided without a promise (most terms of most records).
    const kind = directive.mechanism.kind
    const matched =
      kind === 'all' || kind === 'ip4' || kind === 'ip6'
        ? matchWithoutDns(s, directive.mechanism)
        : await evaluateMechanism(s, directive, domain)
    if (matched === 'nomatch') continue
    if (matched !== 'match') return matched
    const result = QUALIFIER_RESULT[directive.qualifier]
    return { result, mechanism: directive.text, domain, exp: record.explanation }
  }
  // §6.1: redirect applies only when no mechanism matched, and never with an "all" in the record.
  if (record.redirect !== null && !record.hasAll) {
    const term = `redirect=${record.redirect.text}`
    const charged = chargeLookup(s, term)
    if (charged !== null) return charged
    const target = await targetName(s, record.redirect, domain, term)
    if (typeof target === 'object' && target !== null) return target
    if (target === null)
      return permerror(`redirect target '${record.redirect.text}' is not a valid domain name`, term)
    // §6.1: the redirected evaluation's result (and its exp=, §6.2) replaces ours; "none" is a permerror.
    const inner = await evaluate(s, target)
    if (inner.result === 'none')
      return permerror(`redirect target ${target} has no SPF record (RFC 7208 §6.1)`, term)
    return inner
  }
  return { result: 'neutral', domain, reason: 'no mechanism matched (RFC 7208 §4.7)' }
}

/**
 * RFC 7208 §4.3: a <domain> that is malformed, a single label, or a domain literal gives "none"
 * without any DNS lookup. One pass: visible ASCII only, labels of 1-63 characters, at most 253 in
 * all, at least two labels, and a last label that is not all digits (an IP address is no domain).
 */
export function isCheckableDomain(domain: string): boolean {
  const n = domain.length
  if (n === 0 || n > 253 || domain.charCodeAt(0) === 0x5b) return false
  let label = 0
  let dots = 0
  let digitsOnly = true
  for (let i = 0; i < n; i++) {
    const c = domain.charCodeAt(i)
    if (c < 0x21 || c > 0x7e) return false
    if (c === 0x2e) {
      if (label === 0) return false
      label = 0
      dots++
      digitsOnly = true
      continue
    }
    if (++label > 63) return false
    if (c < 0x30 || c > 0x39) digitsOnly = false
  }
  return label > 0 && dots > 0 && !digitsOnly
}

function splitSender(sender: string, domain: string) {
  const at = sender.lastIndexOf('@')
  const local = at === -1 ? '' : sender.slice(0, at)
  const senderDomain = at === -1 ? sender || domain : sender.slice(at + 1)
  const localPart = local === '' ? 'postmaster' : local
  return { localPart, senderDomain, sender: `${localPart}@${senderDomain}` }
}

export async function checkHost(deps: CheckHostDeps, input: CheckHostInput): Promise<CheckHostResult> {
  const parsedIp = parseIp(input.ip)
  if (parsedIp === null) {
    return { result: 'permerror', reason: `'${input.ip}' is not an IP address`, lookups: 0, voidLookups: 0 }
  }
  const domain = input.domain.endsWith('.') ? input.domain.slice(0, -1) : input.domain
  if (!isCheckableDomain(domain)) {
    const reason = `'${input.domain}' is not a valid domain name to check (RFC 7208 §4.3)`
    return { result: 'none', reason, lookups: 0, voidLookups: 0 }
  }
  const ip = unmapIpv4(parsedIp)
  const { localPart, senderDomain, sender } = splitSender(input.sender, domain)
  const s: Session = {
    dns: deps.dns,
    ip,
    values: {
      sender,
      localPart,
      senderDomain,
      domain,
      validatedDomain: undefined,
      ip,
      helo: input.helo,
      receivingHost: input.receivingHost,
      now: input.now,
    },
    lookups: 0,
    voidLookups: 0,
  }
  const outcome = await evaluate(s, domain)
  const result: CheckHostResult = { result: outcome.result, lookups: s.lookups, voidLookups: s.voidLookups }
  if (outcome.mechanism !== undefined) result.mechanism = outcome.mechanism
  if (outcome.reason !== undefined) result.reason = outcome.reason
  if (outcome.result === 'fail') {
    const values = { ...s.values, domain: outcome.domain ?? domain, validatedDomain: undefined }
    const explanation = await explain(s.dns, values, outcome.exp ?? null, input.defaultExplanation)
    if (explanation !== undefined) result.explanation = explanation
  }
  return result
}
