import type { DnsAnswer, DnsResolver, RecordType } from '../../../domain/dns/ports.ts'

// A tiny in-memory zone for the DMARC/DKIM/mail record tests: a plain map from `name|TYPE` to an
// answer. TXT values may be given as text (one RR per string, or an array of character-strings for
// one RR). Names that are absent answer NXDOMAIN, or NODATA when a record of another type or a
// descendant exists (an empty non-terminal), and `*.` owners behave as DNS wildcards (RFC 4592).

export type ZoneValue = DnsAnswer | string | (string | string[])[]

export interface TestZone extends DnsResolver {
  /** Every query made, as `name|TYPE`, in order. */
  queries: string[]
}

export function txt(...records: (string | string[])[]): DnsAnswer {
  return {
    status: 'ok',
    authenticated: false,
    records: records.map((record) => ({
      type: 'TXT' as const,
      strings: Array.isArray(record) ? record : [record],
      ttl: 300,
    })),
  }
}

export function zone(entries: Record<string, ZoneValue>): TestZone {
  const answers = new Map<string, DnsAnswer>()
  const owners = new Set<string>()
  for (const [key, value] of Object.entries(entries)) {
    const [name = '', type = 'TXT'] = key.split('|')
    const owner = name.toLowerCase()
    answers.set(
      `${owner}|${type}`,
      typeof value === 'string' ? txt(value) : Array.isArray(value) ? txt(...value) : value,
    )
    const labels = owner.split('.')
    for (let i = 0; i < labels.length; i++) owners.add(labels.slice(i).join('.'))
  }
  const queries: string[] = []
  return {
    queries,
    async resolve(name: string, type: RecordType): Promise<DnsAnswer> {
      queries.push(`${name}|${type}`)
      const owner = name.toLowerCase().replace(/\.$/, '')
      const exact = answers.get(`${owner}|${type}`)
      if (exact !== undefined) return exact
      if (owners.has(owner)) return { status: 'nodata' }
      // RFC 4592: the wildcard at the closest encloser answers for names that do not exist.
      const labels = owner.split('.')
      for (let i = 1; i < labels.length; i++) {
        const encloser = labels.slice(i).join('.')
        if (!owners.has(encloser)) continue
        const wildcard = answers.get(`*.${encloser}|${type}`)
        if (wildcard !== undefined) return wildcard
        return owners.has(`*.${encloser}`) ? { status: 'nodata' } : { status: 'nxdomain' }
      }
      return { status: 'nxdomain' }
    },
  }
}
