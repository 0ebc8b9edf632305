import type { TlsRptPolicyResult } from './tls-rpt.ts'

// The sessions one domain's part of a TLS-RPT report counts. RFC 8460 §4.4 gives a summary per
// policy evaluated. A sender that checks a domain against both its DANE TLSA records and its
// MTA-STS policy (Microsoft does) lists the same sessions under each, so adding them up doubled
// the domain's figures: where a part has a `tlsa` policy, its `sts` policies are not counted
// (senders that support both, such as Exchange Online, enforce DANE where a domain has TLSA
// records). Everything else adds up: `no-policy-found` sessions are ones no policy applied to,
// and two policies of one type are separate sessions. The stored report keeps every policy; the
// failure types of a domain's summary leave out the same policies
// (infrastructure/repositories/pg-forensic-tls-store.ts).

export interface TlsSessions {
  successful: number
  failed: number
}

export function countedSessions(policies: TlsRptPolicyResult[]): TlsSessions {
  // An sts policy beside a tlsa one repeats the sessions the tlsa one counts.
  const dane = policies.some((policy) => policy.policyType === 'tlsa')
  let successful = 0
  let failed = 0
  for (const policy of policies) {
    if (dane && policy.policyType === 'sts') continue
    successful += policy.totalSuccessfulSessionCount
    failed += policy.totalFailureSessionCount
  }
  return { successful, failed }
}
