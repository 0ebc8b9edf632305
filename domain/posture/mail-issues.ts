import type { Severity } from '../shared/finding.ts'
import { SEVERITY_RANK } from './dmarc-issues.ts'
import type { AreaReport, PostureContext, PostureFindings, PostureIssue } from './posture.ts'

// Mail transport and brand records: MX (RFC 7505 null MX), MTA-STS (RFC 8461), TLS-RPT (RFC 8460),
// BIMI and DNSSEC. Useful hardening, graded lightly: none of it stops spoofing by itself.

export function mailIssues(
  findings: PostureFindings,
  context: PostureContext,
): { issues: PostureIssue[]; area: AreaReport } {
  const { mx, mtaSts, tlsRpt, bimi, domain } = findings
  const issues: PostureIssue[] = []
  const add = (code: string, severity: Severity, message: string, fix?: PostureIssue['fix']) =>
    issues.push({ code: `mail.${code}`, area: 'mail', severity, message, ...(fix ? { fix } : {}) })
  const parts: string[] = []

  if (mx.status === 'null_mx') parts.push('null MX (no mail accepted)')
  else if (mx.status === 'none') {
    parts.push('no MX')
    add(
      'no_mx',
      'info',
      'No MX record: the domain receives no mail. Publish a null MX ("0 .") to say so explicitly (RFC 7505).',
    )
  } else if (mx.status === 'temperror')
    add('mx_lookup_failed', 'low', 'The MX records could not be read (DNS failure).')
  else parts.push(`${mx.hosts.length} MX`)

  const receivesMail = mx.status === 'ok'
  // A missing record is reported once below, with its weight and fix, not also as the lookup's finding.
  const present = <F extends { code: string }>(list: F[]) => list.filter((f) => f.code !== 'no_record')
  for (const finding of [
    ...present(mtaSts.lookup.findings),
    ...(mtaSts.policy?.status === 'ok' ? mtaSts.policy.findings : []),
  ]) {
    add(`mta_sts.${finding.code}`, finding.severity, finding.message)
  }
  if (mtaSts.lookup.status === 'found') {
    if (mtaSts.policy?.status === 'unavailable') {
      add(
        'mta_sts.policy_unavailable',
        'high',
        `An MTA-STS record is published but the policy cannot be fetched: ${mtaSts.policy.reason}.`,
      )
      parts.push('MTA-STS broken')
    } else
      parts.push(`MTA-STS ${mtaSts.policy?.status === 'ok' ? (mtaSts.policy.mode ?? 'invalid') : ''}`.trim())
  } else if (receivesMail && mtaSts.lookup.status === 'none') {
    add('mta_sts.missing', 'low', 'No MTA-STS policy: senders cannot insist on TLS when delivering to you.')
  }

  for (const finding of present(tlsRpt.findings))
    add(`tls_rpt.${finding.code}`, finding.severity, finding.message)
  if (tlsRpt.status === 'found') parts.push('TLS-RPT')
  else if (receivesMail && tlsRpt.status === 'none') {
    add(
      'tls_rpt.missing',
      'low',
      'No TLS-RPT record: you receive no reports of TLS failures delivering to you.',
      {
        type: 'TXT',
        name: `_smtp._tls.${domain}`,
        value: `v=TLSRPTv1; rua=mailto:${context.reportAddress}`,
      },
    )
  }

  if (bimi !== null) {
    for (const finding of present(bimi.findings))
      add(`bimi.${finding.code}`, finding.severity, finding.message)
    if (bimi.status === 'found') parts.push('BIMI')
  }
  if (findings.dnssec === true) parts.push('DNSSEC')

  const worst = issues.reduce((w, i) => Math.max(w, SEVERITY_RANK[i.severity]), 0)
  const status = worst >= SEVERITY_RANK.high ? 'error' : worst >= SEVERITY_RANK.medium ? 'warning' : 'ok'
  return { issues, area: { status, summary: parts.join(', ') || 'nothing published', record: null } }
}
