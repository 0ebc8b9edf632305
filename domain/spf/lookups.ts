// The DNS questions SPF asks, over the DNS port. Shared by check_host() and the analysis.
// A resolver that throws is treated as a server failure: SPF outcomes are values (RFC 7208 §2.6).

import type { DnsAnswer, DnsRecord, DnsResolver, RecordType } from '../dns/ports.ts'
import { type IpAddress, parseIp, reverseName, sameIp, unmapIpv4 } from './ip.ts'
import { MAX_PTR_NAMES } from './limits.ts'

const thrown = (error: unknown): DnsAnswer => ({
  status: 'error',
  reason: error instanceof Error ? error.message : String(error),
})

/** Not an async function: one promise per query rather than two (check_host asks many). */
export function query(dns: DnsResolver, name: string, type: RecordType): Promise<DnsAnswer> {
  try {
    return dns.resolve(name, type).catch(thrown)
  } catch (error) {
    return Promise.resolve(thrown(error))
  }
}

/** Answers cached per name and type: an analysis reaches the same name through several branches. */
export function memoizedResolver(dns: DnsResolver): DnsResolver {
  const answers = new Map<string, ReturnType<DnsResolver['resolve']>>()
  return {
    resolve(name, type) {
      const key = `${type} ${normalizeName(name)}`
      let answer = answers.get(key)
      if (answer === undefined) {
        answer = query(dns, name, type)
        answers.set(key, answer)
      }
      return answer
    },
  }
}

/** RFC 7208 §4.6.4: a lookup is void when the answer is NXDOMAIN or has no records. */
export function isVoid(answer: DnsAnswer): boolean {
  return (
    answer.status === 'nxdomain' ||
    answer.status === 'nodata' ||
    (answer.status === 'ok' && answer.records.length === 0)
  )
}

export function isFailure(answer: DnsAnswer): answer is Extract<DnsAnswer, { status: 'timeout' | 'error' }> {
  return answer.status === 'timeout' || answer.status === 'error'
}

export function describeFailure(answer: DnsAnswer, name: string, type: RecordType): string {
  const why = answer.status === 'error' ? answer.reason : answer.status
  return `DNS ${type} lookup for ${name} failed (${why})`
}

/** Names as DNS hands them back: no trailing dot, lower case, for comparisons. */
export function normalizeName(name: string): string {
  return (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase()
}

/**
 * Whether a (macro-expanded) target can be sent as a DNS query at all: labels of 1-63 octets, at
 * most 253 characters. RFC 7208 §4.3 and the test suite (invalid-domain-long, -empty-label) treat
 * a name that cannot be queried like one that does not exist. Label sizes are UTF-8 octets, counted
 * in one pass without encoding (most names are ASCII, one octet per character).
 */
export function isQueryableName(name: string): boolean {
  if (name === '' || name.length > 253) return false
  let size = 0
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i)
    if (code === 0x2e) {
      if (size === 0) return false
      size = 0
      continue
    }
    if (code < 0x80) size += 1
    else if (code < 0x800) size += 2
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < name.length) {
      // A surrogate pair is one code point of 4 octets; a lone surrogate encodes as U+FFFD (3).
      const next = name.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        size += 4
        i++
      } else size += 3
    } else size += 3
    if (size > 63) return false
  }
  return size > 0
}

export function addressesOf(records: readonly DnsRecord[]): IpAddress[] {
  const out: IpAddress[] = []
  for (const record of records) {
    if (record.type !== 'A' && record.type !== 'AAAA') continue
    const ip = parseIp(record.address)
    if (ip !== null) out.push(unmapIpv4(ip))
  }
  return out
}

export function addressType(ip: IpAddress): 'A' | 'AAAA' {
  return ip.family === 4 ? 'A' : 'AAAA'
}

export type PtrNames = { ok: true; names: string[] } | { ok: false; void: boolean }

export async function ptrNames(dns: DnsResolver, ip: IpAddress): Promise<PtrNames> {
  const answer = await query(dns, reverseName(ip), 'PTR')
  if (answer.status !== 'ok' || answer.records.length === 0) return { ok: false, void: isVoid(answer) }
  const names: string[] = []
  for (const record of answer.records) {
    if (record.type === 'PTR') names.push(normalizeName(record.target))
  }
  // RFC 7208 §4.6.4: only the first 10 PTR names are considered.
  return { ok: true, names: names.slice(0, MAX_PTR_NAMES) }
}

/**
 * RFC 7208 §5.5: a PTR name is validated when one of its A/AAAA records is the client IP. A DNS
 * error on that lookup skips the name (§5.5: "that domain name is skipped and the search continues").
 * 'void' is a lookup that found nothing (NXDOMAIN or no records, §4.6.4).
 */
export async function validateName(
  dns: DnsResolver,
  name: string,
  ip: IpAddress,
): Promise<'validated' | 'not-validated' | 'void'> {
  if (!isQueryableName(name)) return 'not-validated'
  const answer = await query(dns, name, addressType(ip))
  if (isVoid(answer)) return 'void'
  if (answer.status !== 'ok') return 'not-validated'
  return addressesOf(answer.records).some((address) => sameIp(address, ip)) ? 'validated' : 'not-validated'
}

export async function isValidatedName(dns: DnsResolver, name: string, ip: IpAddress): Promise<boolean> {
  return (await validateName(dns, name, ip)) === 'validated'
}

export function isSubdomainOrSelf(name: string, parent: string): boolean {
  const child = normalizeName(name)
  const target = normalizeName(parent)
  return child === target || child.endsWith(`.${target}`)
}

/**
 * The `p` macro (RFC 7208 §7.3): a validated name of the client IP, preferring <domain> itself,
 * then a subdomain of it, then any; "unknown" when none validates or DNS fails. `voids` counts the
 * lookups that found nothing (NXDOMAIN or no records, §4.6.4): the PTR query, or the address
 * queries of the names it gave.
 */
export async function validatedDomainLookup(
  dns: DnsResolver,
  ip: IpAddress,
  domain: string,
): Promise<{ name: string; voids: number }> {
  const ptr = await ptrNames(dns, ip)
  if (!ptr.ok) return { name: 'unknown', voids: ptr.void ? 1 : 0 }
  const validated: string[] = []
  let voids = 0
  for (const name of ptr.names) {
    const outcome = await validateName(dns, name, ip)
    if (outcome === 'validated') validated.push(name)
    else if (outcome === 'void') voids++
  }
  const target = normalizeName(domain)
  const name =
    validated.find((name) => name === target) ??
    validated.find((name) => isSubdomainOrSelf(name, target)) ??
    validated[0] ??
    'unknown'
  return { name, voids }
}

/** The `p` macro's value alone, where void lookups are not counted (exp= text, §6.2). */
export async function validatedDomain(dns: DnsResolver, ip: IpAddress, domain: string): Promise<string> {
  return (await validatedDomainLookup(dns, ip, domain)).name
}
