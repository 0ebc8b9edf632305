// Parsed SPF records, kept by their exact text. Every evaluation fetches the same few records again
// (a provider's include is in thousands of domains' records, and a TTL cache hands back the same
// text), and parsing them again was ~29% of an evaluation (docs/spf-management.md "Speed of SPF
// evaluation"). The cache is bounded in entries and in estimated bytes, least recently used out
// first; what it holds is frozen, since every caller shares it.

import { parseSpfRecord, type SpfParse } from './record.ts'

export interface RecordCacheLimits {
  maxEntries: number
  /** Estimated bytes of the parsed records held (recordCost). */
  maxBytes: number
}

export interface RecordCache {
  parse(text: string): SpfParse
  readonly size: number
  readonly bytes: number
}

/** 1,000 records, 4 MiB: far more than the providers' records a receiver sees in a day. */
export const DEFAULT_RECORD_CACHE: RecordCacheLimits = { maxEntries: 1000, maxBytes: 4 * 1024 * 1024 }

/**
 * An estimate, on the high side, of what a parse keeps alive: the text twice in UTF-16 (the record's
 * and its terms' texts), and ~320 bytes of objects per term (the term, its mechanism, a domain-spec
 * and its tokens).
 */
export function recordCost(text: string, parsed: SpfParse): number {
  const terms = parsed.ok ? parsed.record.terms.length : 1
  return 256 + 4 * text.length + 320 * terms
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || Object.isFrozen(value))
    return value
  for (const child of Object.values(value)) deepFreeze(child)
  return Object.freeze(value)
}

export function createRecordCache(limits: RecordCacheLimits = DEFAULT_RECORD_CACHE): RecordCache {
  // A Map iterates in insertion order: re-inserting on a hit keeps the least recently used first.
  const entries = new Map<string, { parsed: SpfParse; cost: number }>()
  let bytes = 0
  return {
    parse(text) {
      const hit = entries.get(text)
      if (hit !== undefined) {
        entries.delete(text)
        entries.set(text, hit)
        return hit.parsed
      }
      const parsed = deepFreeze(parseSpfRecord(text))
      const cost = recordCost(text, parsed)
      // One record may not take more than an eighth of the budget (a 64 KB record is parsed each time).
      if (cost > limits.maxBytes / 8 || limits.maxEntries < 1) return parsed
      entries.set(text, { parsed, cost })
      bytes += cost
      for (const [key, entry] of entries) {
        if (entries.size <= limits.maxEntries && bytes <= limits.maxBytes) break
        entries.delete(key)
        bytes -= entry.cost
      }
      return parsed
    },
    get size() {
      return entries.size
    },
    get bytes() {
      return bytes
    },
  }
}

/** The process's cache, used by fetchSpfRecord. */
export const sharedRecordCache = createRecordCache()
