// The DNS mechanisms a, mx, ptr and exists (RFC 7208 §5.3-§5.5, §5.7), and the per-evaluation
// session that counts lookups against the processing limits (§4.6.4) as they happen.

import type { DnsResolver } from '../dns/ports.ts'
import type { SpfResult } from './check-host.ts'
import { type IpAddress, inNetwork } from './ip.ts'
import { MAX_DNS_TERMS, MAX_MX_RECORDS, MAX_VOID_LOOKUPS } from './limits.ts'
import {
  addressesOf,
  addressType,
  describeFailure,
  isFailure,
  isQueryableName,
  isSubdomainOrSelf,
  isValidatedName,
  isVoid,
  ptrNames,
  query,
  validatedDomainLookup,
} from './lookups.ts'
import { expandDomainSpec, type MacroValues, usesLetter } from './macro.ts'
import type { Directive, DomainSpec } from './record.ts'

export interface Session {
  dns: DnsResolver
  ip: IpAddress
  /**
   * The macro values; `domain` and `validatedDomain` are set just before each expansion (no await
   * between setting and expanding), so one object serves the whole evaluation.
   */
  values: MacroValues
  lookups: number
  voidLookups: number
}

/** The result of one record's evaluation; `exp` is the explanation to use if it stays a fail. */
export interface Outcome {
  result: SpfResult
  mechanism?: string
  reason?: string
  domain?: string
  exp?: DomainSpec | null
}

export type Match = 'match' | 'nomatch' | Outcome

export const permerror = (reason: string, mechanism?: string): Outcome => ({
  result: 'permerror',
  reason,
  mechanism,
})
export const temperror = (reason: string, mechanism?: string): Outcome => ({
  result: 'temperror',
  reason,
  mechanism,
})

/** §4.6.4: counted before the lookup, so the 11th DNS-querying term fails without querying. */
export function chargeLookup(s: Session, term: string): Outcome | null {
  s.lookups += 1
  if (s.lookups <= MAX_DNS_TERMS) return null
  return permerror(`more than ${MAX_DNS_TERMS} DNS-querying terms (RFC 7208 §4.6.4)`, term)
}

function chargeVoid(s: Session, term: string): Outcome | null {
  s.voidLookups += 1
  if (s.voidLookups <= MAX_VOID_LOOKUPS) return null
  return permerror(`more than ${MAX_VOID_LOOKUPS} void DNS lookups (RFC 7208 §4.6.4)`, term)
}

/** Expands a target (default: the current domain); null when the result cannot be a DNS name. */
export async function targetName(
  s: Session,
  spec: DomainSpec | null,
  domain: string,
  term: string,
): Promise<string | null | Outcome> {
  if (spec === null) return domain
  let validated: string | undefined
  if (usesLetter(spec.tokens, 'p')) {
    // §4.6.4 limits "terms" that cause DNS queries (include, a, mx, ptr, exists, redirect): the
    // PTR query of the %{p} macro is part of its term's work, not an 11th term. But its lookups
    // that find nothing (the PTR query, or the address query of a name it gave) are void lookups
    // toward the limit of 2. pyspf 2.0.14 and Mail::SPF 2.009 agree on all three points
    // (tests/domain/spf/check-host.test.ts).
    const lookup = await validatedDomainLookup(s.dns, s.ip, domain)
    for (let i = 0; i < lookup.voids; i++) {
      const charged = chargeVoid(s, term)
      if (charged !== null) return charged
    }
    validated = lookup.name
  }
  s.values.domain = domain
  s.values.validatedDomain = validated
  const name = expandDomainSpec(spec.tokens, s.values)
  return isQueryableName(name) ? name : null
}

/** The client-family addresses of `name` (RFC 7208 §5.3, §5.4); 'void' for NXDOMAIN / no data. */
async function clientFamilyAddresses(
  s: Session,
  name: string,
  term: string,
): Promise<IpAddress[] | 'void' | Outcome> {
  const type = addressType(s.ip)
  const answer = await query(s.dns, name, type)
  if (isFailure(answer)) return temperror(describeFailure(answer, name, type), term)
  if (isVoid(answer) || answer.status !== 'ok') return 'void'
  return addressesOf(answer.records)
}

function cidrFor(s: Session, directive: Directive): number {
  const m = directive.mechanism
  const cidr = m.kind === 'a' || m.kind === 'mx' ? (s.ip.family === 4 ? m.cidr4 : m.cidr6) : null
  return cidr ?? (s.ip.family === 4 ? 32 : 128)
}

/** a, mx, ptr, exists against an already expanded, queryable target name. */
export async function evaluateDnsMechanism(s: Session, directive: Directive, target: string): Promise<Match> {
  const m = directive.mechanism
  const term = directive.text
  switch (m.kind) {
    case 'a': {
      const addresses = await clientFamilyAddresses(s, target, term)
      if (addresses === 'void') return chargeVoid(s, term) ?? 'nomatch'
      if (!Array.isArray(addresses)) return addresses
      const prefix = cidrFor(s, directive)
      return addresses.some((address) => inNetwork(s.ip, address, prefix)) ? 'match' : 'nomatch'
    }
    case 'mx':
      return evaluateMx(s, target, directive)
    case 'ptr':
      return evaluatePtr(s, target, term)
    case 'exists': {
      // §5.7: always an A query, whatever the client's address family.
      const answer = await query(s.dns, target, 'A')
      if (isFailure(answer)) return temperror(describeFailure(answer, target, 'A'), term)
      if (isVoid(answer)) return chargeVoid(s, term) ?? 'nomatch'
      return 'match'
    }
    default:
      return 'nomatch'
  }
}

async function evaluateMx(s: Session, target: string, directive: Directive): Promise<Match> {
  const term = directive.text
  const answer = await query(s.dns, target, 'MX')
  if (isFailure(answer)) return temperror(describeFailure(answer, target, 'MX'), term)
  if (answer.status !== 'ok' || answer.records.length === 0) return chargeVoid(s, term) ?? 'nomatch'
  // RFC 7505: a null MX ("." or empty exchange) names no host.
  const hosts: string[] = []
  for (const r of answer.records) {
    if (r.type === 'MX' && r.exchange !== '' && r.exchange !== '.') hosts.push(r.exchange)
  }
  // §4.6.4: more than 10 MX records is a permerror (test mx-limit).
  if (hosts.length > MAX_MX_RECORDS)
    return permerror(`${target} has more than ${MAX_MX_RECORDS} MX records`, term)
  const prefix = cidrFor(s, directive)
  for (const host of hosts) {
    if (!isQueryableName(host)) continue
    // Address lookups of MX hosts are not terms of their own: a void one is skipped, not counted.
    // (pyspf 2.0.14 and Mail::SPF 2.009 count it; for an IPv6 client that makes every IPv4-only
    // MX host a void lookup, and docs/decisions.md keeps the RFC's "terms" reading here.)
    const addresses = await clientFamilyAddresses(s, host, term)
    if (addresses === 'void') continue
    if (!Array.isArray(addresses)) return addresses
    if (addresses.some((address) => inNetwork(s.ip, address, prefix))) return 'match'
  }
  return 'nomatch'
}

/** §5.5: DNS errors make ptr not match; only the first 10 PTR names count (§4.6.4). */
async function evaluatePtr(s: Session, target: string, term: string): Promise<Match> {
  const ptr = await ptrNames(s.dns, s.ip)
  if (!ptr.ok) return ptr.void ? (chargeVoid(s, term) ?? 'nomatch') : 'nomatch'
  for (const name of ptr.names) {
    if (isSubdomainOrSelf(name, target) && (await isValidatedName(s.dns, name, s.ip))) return 'match'
  }
  return 'nomatch'
}
