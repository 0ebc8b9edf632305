// A TTL cache in front of any DnsResolver, shared by all checks: a domain's SPF include tree,
// DMARC and DKIM lookups repeat the same names, and asking again within a TTL only adds load and
// latency. Negative answers are cached too (RFC 2308), failures only briefly.

import type { DnsAnswer, DnsResolver, RecordType } from '../../domain/dns/ports.ts'

export interface TtlCacheOptions {
  /** Milliseconds since the epoch (inject a fake clock in tests). */
  now: () => number
  /** Least-recently-used entries are evicted beyond this (default 10,000). */
  maxEntries?: number
  /** Seconds; answer TTLs are clamped to [minTtl, maxTtl] (defaults 0 and 86,400). */
  minTtl?: number
  maxTtl?: number
  /** Seconds for NXDOMAIN / no-data answers without an SOA TTL (default 60). */
  negativeTtl?: number
  /** Seconds for timeouts and errors, so a failing name is not hammered (default 5, RFC 2308 §7). */
  failureTtl?: number
}

export interface DnsCacheStats {
  /** Answers served without asking the upstream resolver (including joined in-flight queries). */
  hits: number
  /** Queries passed to the upstream resolver. */
  misses: number
  /** Entries held now. */
  size: number
}

export interface CachingDnsResolver extends DnsResolver {
  stats(): DnsCacheStats
}

interface Entry {
  answer: DnsAnswer
  storedAt: number
  expiresAt: number
}

/** The cached answer with TTLs counted down by its age, as a resolver's cache would report them. */
function aged(answer: DnsAnswer, ageSeconds: number): DnsAnswer {
  if (ageSeconds <= 0) return answer
  const left = (ttl: number) => Math.max(0, ttl - ageSeconds)
  switch (answer.status) {
    case 'ok':
      return { ...answer, records: answer.records.map((record) => ({ ...record, ttl: left(record.ttl) })) }
    case 'nxdomain':
    case 'nodata':
      return answer.ttl === undefined ? answer : { ...answer, ttl: left(answer.ttl) }
    default:
      return answer
  }
}

export function withTtlCache(resolver: DnsResolver, options: TtlCacheOptions): CachingDnsResolver {
  const { now } = options
  const maxEntries = Math.max(1, options.maxEntries ?? 10_000)
  const minTtl = options.minTtl ?? 0
  const maxTtl = options.maxTtl ?? 86_400
  const negativeTtl = options.negativeTtl ?? 60
  const failureTtl = options.failureTtl ?? 5
  // A Map iterates in insertion order; re-inserting on every hit makes the first key the LRU one.
  const entries = new Map<string, Entry>()
  const inFlight = new Map<string, Promise<DnsAnswer>>()
  let hits = 0
  let misses = 0

  /** Seconds this answer may be reused. */
  function lifetime(answer: DnsAnswer): number {
    const clamp = (ttl: number) => Math.min(maxTtl, Math.max(minTtl, ttl))
    switch (answer.status) {
      case 'ok':
        // An RRset is reusable as long as its shortest-lived record (RFC 2181 §5.2).
        return clamp(Math.min(...answer.records.map((record) => record.ttl)))
      case 'nxdomain':
      case 'nodata':
        return clamp(answer.ttl ?? negativeTtl)
      default:
        // Not clamped up by minTtl: a failure is worth remembering only for a moment.
        return failureTtl
    }
  }

  function store(key: string, answer: DnsAnswer) {
    const ttl = lifetime(answer)
    if (!(ttl > 0)) return
    const storedAt = now()
    entries.delete(key)
    entries.set(key, { answer, storedAt, expiresAt: storedAt + ttl * 1000 })
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next().value
      if (oldest === undefined) break
      entries.delete(oldest)
    }
  }

  async function ask(name: string, type: RecordType): Promise<DnsAnswer> {
    try {
      return await resolver.resolve(name, type)
    } catch (error) {
      // The port promises answers, not exceptions; keep that promise for every caller sharing this query.
      return { status: 'error', reason: error instanceof Error ? error.message : String(error) }
    }
  }

  return {
    resolve(name, type) {
      // DNS names compare case-insensitively (RFC 4343), with or without the root dot.
      const key = `${type} ${name.trim().toLowerCase().replace(/\.$/, '')}`
      const entry = entries.get(key)
      if (entry !== undefined) {
        const at = now()
        if (at < entry.expiresAt) {
          hits++
          entries.delete(key)
          entries.set(key, entry)
          return Promise.resolve(aged(entry.answer, Math.floor((at - entry.storedAt) / 1000)))
        }
        entries.delete(key)
      }
      const pending = inFlight.get(key)
      if (pending !== undefined) {
        hits++
        return pending
      }
      misses++
      const promise = ask(name, type).then((answer) => {
        inFlight.delete(key)
        store(key, answer)
        return answer
      })
      inFlight.set(key, promise)
      return promise
    },

    stats() {
      return { hits, misses, size: entries.size }
    },
  }
}
