import type { PostureFindings } from '../posture/posture.ts'

// The raw DNS records a posture check read, keyed so that two checks can be compared record by
// record (the `dns_record_changed` / `dns_record_removed` rules). Built from the stored findings,
// so the history in `domain_checks` yields a snapshot for every past check.

export type RecordKind = 'dmarc' | 'spf' | 'dkim' | 'mta_sts' | 'tls_rpt' | 'bimi'

export interface SnapshotRecord {
  kind: RecordKind
  /** The DNS name the record lives at. */
  name: string
  /** The record text as published (character-strings joined); null when the name has none. */
  value: string | null
}

export interface RecordSnapshot {
  /** ISO 8601: when the check ran. */
  checkedAt: string
  /**
   * By subject: `dmarc`, `spf`, `mta_sts`, `tls_rpt`, `bimi`, `dkim:<selector>`. A record the check
   * could not read conclusively (DNS failure, several records at once, a selector not probed) is
   * left out rather than recorded as absent, so it never looks removed.
   */
  records: Record<string, SnapshotRecord>
}

export const dkimSubject = (selector: string) => `dkim:${selector}`

type Versioned = {
  status: 'found' | 'none' | 'invalid' | 'temperror'
  name: string
  record: { raw: string } | null
}

function versioned(kind: RecordKind, lookup: Versioned | null): SnapshotRecord | null {
  if (lookup === null) return null
  if (lookup.status === 'found' && lookup.record !== null)
    return { kind, name: lookup.name, value: lookup.record.raw }
  // RFC 8461 §3.1, RFC 8460 §3: several records count as none for peers, but that is the posture's
  // finding to report; as a record it is neither this text nor absent.
  return lookup.status === 'none' ? { kind, name: lookup.name, value: null } : null
}

export function recordSnapshot(findings: PostureFindings): RecordSnapshot {
  const records: Record<string, SnapshotRecord> = {}
  const put = (subject: string, record: SnapshotRecord | null) => {
    if (record !== null) records[subject] = record
  }
  // The domain's own _dmarc record (the first name of the RFC 9989 §4.10 tree walk): the one the
  // owner publishes. A record inherited from the organizational domain is that domain's record.
  const own = findings.dmarc.queries[0]
  if (own?.outcome === 'record') put('dmarc', { kind: 'dmarc', name: own.name, value: own.record })
  else if (own?.outcome === 'none') put('dmarc', { kind: 'dmarc', name: own.name, value: null })

  const spf = findings.spf
  if (spf.tree.status === 'none') put('spf', { kind: 'spf', name: spf.domain, value: null })
  else if (spf.record !== null && spf.tree.status !== 'dns_error' && spf.tree.status !== 'multiple_records')
    put('spf', { kind: 'spf', name: spf.domain, value: spf.record })

  // Only keys found and configured selectors confirmed missing: a guessed selector that is absent
  // is not reported by the check at all (domain/dkim/selectors.ts), so its absence proves nothing.
  for (const check of findings.dkim.selectors) {
    if (check.status === 'found')
      put(dkimSubject(check.selector), { kind: 'dkim', name: check.name, value: check.raw })
    else if (check.status === 'missing')
      put(dkimSubject(check.selector), { kind: 'dkim', name: check.name, value: null })
  }

  put('mta_sts', versioned('mta_sts', findings.mtaSts.lookup))
  put('tls_rpt', versioned('tls_rpt', findings.tlsRpt))
  put('bimi', versioned('bimi', findings.bimi))
  return { checkedAt: findings.checkedAt, records }
}
