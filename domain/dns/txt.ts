import type { DnsAnswer } from './ports.ts'

/**
 * The TXT values of an answer, one per RR with its character-strings joined without spaces — how
 * SPF (RFC 7208 §3.3), DMARC (RFC 9989), DKIM (RFC 6376 §3.6.2.2), MTA-STS, TLS-RPT and BIMI all
 * read a record split into several strings. Empty for a failed, NXDOMAIN or no-data answer.
 */
export function txtValues(answer: DnsAnswer): string[] {
  if (answer.status !== 'ok') return []
  return answer.records.flatMap((record) => (record.type === 'TXT' ? [record.strings.join('')] : []))
}
