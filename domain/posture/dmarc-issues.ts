import type { Severity } from '../shared/finding.ts'
import type { AreaReport, PostureContext, PostureFindings, PostureIssue } from './posture.ts'

// DMARC issues: the record's own findings, plus what matters for the owner's protection and for
// receiving reports (RFC 9989). Every fix is a record to publish at `_dmarc.<domain>`.

function withTag(record: string, tag: string, value: string): string {
  const parts = record
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '')
  const index = parts.findIndex((p) => p.toLowerCase().startsWith(`${tag}=`))
  if (index >= 0) parts[index] = `${tag}=${value}`
  else parts.push(`${tag}=${value}`)
  return `${parts.join('; ')}`
}

export function dmarcIssues(
  findings: PostureFindings,
  context: PostureContext,
): { issues: PostureIssue[]; area: AreaReport } {
  const { dmarc } = findings
  const name = `_dmarc.${findings.domain}`
  const rua = `mailto:${context.reportAddress}`
  const issues: PostureIssue[] = []
  const add = (code: string, severity: Severity, message: string, fix?: PostureIssue['fix']) =>
    issues.push({ code: `dmarc.${code}`, area: 'dmarc', severity, message, ...(fix ? { fix } : {}) })

  const record = dmarc.record
  if (record === null || dmarc.appliedPolicy === null) {
    const temporary = !dmarc.complete && dmarc.findings.some((f) => f.code === 'dns_temperror')
    if (temporary) {
      add(
        'lookup_failed',
        'medium',
        'The DMARC record could not be read (DNS failure); the check will be repeated.',
      )
      return { issues, area: { status: 'warning', summary: 'DNS lookup failed', record: null } }
    }
    for (const finding of dmarc.findings) {
      if (finding.code === 'multiple_records' || finding.code === 'policy_record_unusable') {
        add(finding.code, 'critical', finding.message)
      }
    }
    add(
      'no_record',
      'critical',
      'No usable DMARC record: anyone can send mail as this domain and receivers are not asked to act on failures.',
      {
        type: 'TXT',
        name,
        value: `v=DMARC1; p=none; rua=${rua}`,
        note: 'Start with p=none to collect reports, then move to quarantine and reject.',
      },
    )
    return { issues, area: { status: 'missing', summary: 'No DMARC record', record: null } }
  }

  const raw = dmarc.rawRecord ?? ''
  const inherited = dmarc.policyDomain !== findings.domain
  const { policy, testing } = dmarc.appliedPolicy
  // These two are reported below with a fix attached.
  const covered = new Set(['no_aggregate_reports', 'testing_mode'])
  for (const finding of dmarc.recordFindings) {
    if (!covered.has(finding.code)) add(finding.code, finding.severity, finding.message)
  }
  for (const finding of dmarc.findings) {
    if (finding.code === 'inherited_policy' || finding.code === 'psd_policy_applies')
      add(finding.code, 'info', finding.message)
    else if (finding.code !== 'no_dmarc_record') add(finding.code, finding.severity, finding.message)
  }

  if (policy === 'none') {
    add(
      'policy_none',
      'high',
      'The policy is p=none: failures are reported but not acted on, so spoofed mail is still delivered.',
      inherited
        ? undefined
        : {
            type: 'TXT',
            name,
            value: withTag(raw, 'p', 'quarantine'),
            note: 'Once reports show your legitimate senders pass.',
          },
    )
  } else if (policy === 'quarantine') {
    add(
      'policy_quarantine',
      'low',
      'The policy is p=quarantine: failing mail goes to spam. p=reject refuses it outright.',
      inherited ? undefined : { type: 'TXT', name, value: withTag(raw, 'p', 'reject') },
    )
  }
  if (testing)
    add('testing', 'medium', 't=y: receivers apply one level below the published policy while you test.')
  if (record.pct !== null && record.pct < 100) {
    add(
      'pct_below_100',
      'medium',
      `pct=${record.pct}: the policy applies to only part of the failing mail.`,
      {
        type: 'TXT',
        name,
        value: withTag(raw, 'pct', '100'),
      },
    )
  }
  if (!inherited && record.effective.sp === 'none' && policy !== 'none') {
    add(
      'subdomains_unprotected',
      'medium',
      'sp=none leaves subdomains open to spoofing while the domain itself is protected.',
    )
  }
  if (record.rua.length === 0) {
    add(
      'no_rua',
      'medium',
      'No rua= address: you receive no aggregate reports, so you cannot see who sends as you.',
      {
        type: 'TXT',
        name: `_dmarc.${dmarc.policyDomain}`,
        value: withTag(raw, 'rua', rua),
      },
    )
  } else if (!record.rua.some((uri) => uri.address?.toLowerCase() === context.reportAddress.toLowerCase())) {
    add(
      'reports_not_to_dmarcwatch',
      'info',
      // Not "stay empty": reports may reach dmarcwatch another way (forwarded, imported, the demo's).
      'The rua= addresses do not include your dmarcwatch report address: reporters send aggregate reports elsewhere, so sources and rates here miss what they report.',
      {
        type: 'TXT',
        name: `_dmarc.${dmarc.policyDomain}`,
        value: withTag(raw, 'rua', `${record.rua.map((u) => u.raw).join(',')},${rua}`),
      },
    )
  }
  for (const destination of findings.reportAuthorization?.destinations ?? []) {
    if (destination.status === 'not_authorized') {
      add(
        'report_destination_unauthorized',
        'high',
        `${destination.host} has not authorised receiving ${destination.tag} reports for this domain, so receivers will not send them (RFC 9989 external destination check).`,
        destination.name === null
          ? undefined
          : {
              type: 'TXT',
              name: destination.name,
              value: 'v=DMARC1',
              note: `Publish in the ${destination.host} zone.`,
            },
      )
    }
  }

  const worst = issues.reduce((w, i) => Math.max(w, SEVERITY_RANK[i.severity]), 0)
  const status = worst >= SEVERITY_RANK.high ? 'error' : worst >= SEVERITY_RANK.low ? 'warning' : 'ok'
  const reports =
    record.rua.length === 0
      ? 'no reports'
      : `reports to ${record.rua.length} address${record.rua.length > 1 ? 'es' : ''}`
  const source = inherited ? ` (inherited from ${dmarc.policyDomain})` : ''
  return {
    issues,
    area: { status, summary: `p=${policy}${testing ? ' (testing)' : ''}, ${reports}${source}`, record: raw },
  }
}

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 }
