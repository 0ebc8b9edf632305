import type { DnsResolver } from './ports.ts'

/**
 * Wraps a resolver to note the smallest TTL among the answers a check used, so the check's result
 * can be served as fresh for exactly as long as the DNS data behind it (negative answers count with
 * their SOA TTL; failures make the result stale at once).
 */
export function recordingTtls(dns: DnsResolver): { dns: DnsResolver; minTtl(): number | null } {
  let min: number | null = null
  const note = (ttl: number) => {
    min = min === null ? ttl : Math.min(min, ttl)
  }
  return {
    dns: {
      async resolve(name, type) {
        const answer = await dns.resolve(name, type)
        if (answer.status === 'ok') for (const record of answer.records) note(record.ttl)
        else if (answer.status === 'nxdomain' || answer.status === 'nodata') {
          if (answer.ttl !== undefined) note(answer.ttl)
        } else note(0)
        return answer
      },
    },
    minTtl: () => min,
  }
}
