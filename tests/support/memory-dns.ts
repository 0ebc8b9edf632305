// An in-memory DnsResolver for SPF tests, built from the RFC 7208 suite's zone data or by hand.
// It follows the conventions of the reference harness (pyspf test/testspf.py): see
// tests/fixtures/spf/SOURCES.md.

import type { DnsAnswer, DnsRecord, DnsResolver, RecordType } from '../../domain/dns/ports.ts'

/** A record, or the point after which queries for types not yet listed time out. */
export type ZoneEntry = DnsRecord | { type: 'TIMEOUT' }

/** Owner name (any case, optional trailing dot) → entries in order. A listed name always exists. */
export type Zone = Record<string, ZoneEntry[]>

export interface MemoryDns extends DnsResolver {
  /** Every question asked, in order, as `TYPE name`. */
  readonly queries: string[]
}

const MAX_CNAME_HOPS = 8
const TTL = 300

function key(name: string): string {
  return (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase()
}

export function memoryDns(zone: Zone): MemoryDns {
  const names = new Map<string, ZoneEntry[]>()
  for (const [name, entries] of Object.entries(zone)) names.set(key(name), entries)
  const queries: string[] = []

  function answer(name: string, type: RecordType, hops: number): DnsAnswer {
    if (name.split('.').some((label) => label.length > 63))
      return { status: 'error', reason: 'label too long' }
    const entries = names.get(key(name))
    if (entries === undefined) return { status: 'nxdomain', ttl: TTL }
    const cname = entries.find((entry) => entry.type === 'CNAME')
    if (cname !== undefined && cname.type === 'CNAME' && type !== 'CNAME') {
      if (hops >= MAX_CNAME_HOPS) return { status: 'error', reason: 'CNAME chain too long or looping' }
      return answer(cname.target, type, hops + 1)
    }
    const records: DnsRecord[] = []
    for (const entry of entries) {
      if (entry.type === 'TIMEOUT') {
        if (records.length === 0) return { status: 'timeout' }
        break
      }
      if (entry.type === type) records.push(entry)
    }
    return records.length === 0
      ? { status: 'nodata', ttl: TTL }
      : { status: 'ok', records, authenticated: false }
  }

  return {
    queries,
    async resolve(name, type) {
      queries.push(`${type} ${name}`)
      return answer(name, type, 0)
    },
  }
}

function txtStrings(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String)
  return [String(value)]
}

/**
 * Converts one scenario's `zonedata` (RFC 7208 suite format) to a Zone. `SPF` entries are served as
 * TXT, after everything else (so after any TIMEOUT), unless the name lists a TXT entry itself,
 * `TXT: NONE` included: this is how pyspf's harness reads the suite.
 */
export function zoneFromSuite(zonedata: Record<string, unknown[]>): Zone {
  const zone: Zone = {}
  for (const [name, rrs] of Object.entries(zonedata)) {
    const entries: ZoneEntry[] = []
    const generated: ZoneEntry[] = []
    let explicitTxt = false
    for (const rr of rrs ?? []) {
      if (rr === 'TIMEOUT') {
        entries.push({ type: 'TIMEOUT' })
        continue
      }
      for (const [type, value] of Object.entries(rr as Record<string, unknown>)) {
        if (type === 'TXT') explicitTxt = true
        if (value === 'NONE') continue
        switch (type) {
          case 'SPF':
            generated.push({ type: 'TXT', strings: txtStrings(value), ttl: TTL })
            break
          case 'TXT':
            entries.push({ type: 'TXT', strings: txtStrings(value), ttl: TTL })
            break
          case 'A':
          case 'AAAA':
            entries.push({ type, address: String(value), ttl: TTL })
            break
          case 'MX': {
            const [preference, exchange] = value as [number, string]
            entries.push({ type: 'MX', preference, exchange: String(exchange), ttl: TTL })
            break
          }
          case 'PTR':
          case 'CNAME':
            entries.push({ type, target: String(value), ttl: TTL })
            break
          default:
            throw new Error(`zone data for ${name}: unsupported record type ${type}`)
        }
      }
    }
    zone[name] = explicitTxt ? entries : [...entries, ...generated]
  }
  return zone
}

// Builders for hand-written zones.
export const txt = (...strings: string[]): DnsRecord => ({ type: 'TXT', strings, ttl: TTL })
export const a = (address: string): DnsRecord => ({ type: 'A', address, ttl: TTL })
export const aaaa = (address: string): DnsRecord => ({ type: 'AAAA', address, ttl: TTL })
export const mx = (preference: number, exchange: string): DnsRecord => ({
  type: 'MX',
  preference,
  exchange,
  ttl: TTL,
})
export const ptr = (target: string): DnsRecord => ({ type: 'PTR', target, ttl: TTL })
export const cname = (target: string): DnsRecord => ({ type: 'CNAME', target, ttl: TTL })
export const TIMEOUT: ZoneEntry = { type: 'TIMEOUT' }
