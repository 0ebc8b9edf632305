// A short-lived, bounded cache of lookups that found something, for the ingest hot path (every
// message looks up its account by ingest key and its report's domain). Only hits are cached: a
// key or domain that appears (an account created, a domain added or verified) is seen at once,
// while one that disappears is still served for at most `ttlMs`, which storage tolerates (a
// foreign key refuses the write and the job retries after the entry expired).

export interface FoundCacheOptions {
  ttlMs: number
  /** Entries kept at most; the oldest go first. */
  max: number
  now: () => number
}

export function cacheFound<V>(
  load: (key: string) => Promise<V>,
  options: FoundCacheOptions & {
    /** What counts as found (default: not null); anything else is returned but not kept. */
    found?: (value: V) => boolean
  },
): ((key: string) => Promise<V>) & { clear(): void } {
  const found = options.found ?? ((value: V) => value !== null)
  const entries = new Map<string, { value: V; expires: number }>()
  const lookup = async (key: string) => {
    const cached = entries.get(key)
    const now = options.now()
    if (cached !== undefined) {
      if (cached.expires > now) return cached.value
      entries.delete(key)
    }
    const value = await load(key)
    if (found(value)) {
      // Map keeps insertion order: the first key is the oldest entry.
      if (entries.size >= options.max) entries.delete(entries.keys().next().value as string)
      entries.set(key, { value, expires: now + options.ttlMs })
    }
    return value
  }
  // For a caller that learns an entry went stale before it expired (a write refused).
  return Object.assign(lookup, { clear: () => entries.clear() })
}
