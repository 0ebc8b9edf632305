// Reading a write back (issue #7): from the provider, then over real DNS through the DnsResolver
// port, polled briefly since a provider may take a moment to serve what it accepted.

import type { DnsAnswer, DnsResolver, RecordType } from '../dns/ports.ts'
import type { RecordSet } from './ports.ts'
import { normalizeName } from './record-set.ts'
import type { Target } from './use-cases.ts'

export interface ReadBackDeps {
  /** Uncached: a read-back must not be answered from a cache filled before the write. */
  dns: DnsResolver
  wait: (ms: number) => Promise<void>
  /** How long a change may take to show over DNS before the write is left `applied` with a note. */
  readBack: { attempts: number; intervalMs: number }
}

export const sameValues = (a: string[], b: string[]) =>
  a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i])

/** What a name holds over DNS, in the port's value form; null when it holds nothing of the type. */
export function dnsValues(answer: DnsAnswer): string[] | null | 'unknown' {
  if (answer.status === 'nxdomain' || answer.status === 'nodata') return null
  if (answer.status !== 'ok') return 'unknown'
  return answer.records.map((r) => {
    switch (r.type) {
      case 'TXT':
        return r.strings.join('')
      case 'A':
      case 'AAAA':
        return r.address.toLowerCase()
      case 'MX':
        return `${r.preference} ${normalizeName(r.exchange)}`
      default:
        return normalizeName(r.target)
    }
  })
}

/**
 * Reads the set back from the provider, then polls DNS (bounded) until it shows `expected` (null:
 * nothing). Null when both agree, else what was wrong.
 */
export async function confirm(
  deps: ReadBackDeps,
  target: Target,
  name: string,
  type: string,
  expected: RecordSet | null,
): Promise<{ stage: 'provider' | 'dns'; message: string } | null> {
  const read = await target.provider.readRecords(target.zone, { name, type })
  if (!read.ok) return { stage: 'provider', message: `reading back failed: ${read.failure.message}` }
  const held = read.value[0]?.values ?? null
  const wanted = expected?.values ?? null
  if (held === null ? wanted !== null : wanted === null || !sameValues(held, wanted))
    return { stage: 'provider', message: `the provider holds ${JSON.stringify(held)} instead` }
  let seen: string[] | null | 'unknown' = 'unknown'
  for (let attempt = 0; attempt < deps.readBack.attempts; attempt++) {
    if (attempt > 0) await deps.wait(deps.readBack.intervalMs)
    seen = dnsValues(await deps.dns.resolve(name, type as RecordType))
    if (seen !== 'unknown' && (seen === null ? wanted === null : wanted !== null && sameValues(seen, wanted)))
      return null
  }
  const total = Math.round((deps.readBack.attempts * deps.readBack.intervalMs) / 1000)
  return {
    stage: 'dns',
    message: `not visible over DNS within ${total} s (DNS answers ${JSON.stringify(seen)})`,
  }
}
