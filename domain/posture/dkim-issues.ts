import type { Severity } from '../shared/finding.ts'
import { SEVERITY_RANK } from './dmarc-issues.ts'
import type { AreaReport, PostureFindings, PostureIssue } from './posture.ts'

// DKIM issues (RFC 6376, RFC 8301). Keys cannot be listed, so "none found" means none among the
// configured, learned and common selectors; the message says so and how to add selectors.

export function dkimIssues(findings: PostureFindings): { issues: PostureIssue[]; area: AreaReport } {
  const { dkim } = findings
  const issues: PostureIssue[] = []
  const add = (code: string, severity: Severity, message: string) =>
    issues.push({ code: `dkim.${code}`, area: 'dkim', severity, message })
  for (const finding of dkim.findings) add(finding.code, finding.severity, finding.message)
  const found = dkim.selectors.filter((s) => s.status === 'found')
  const usable = found.filter((s) => s.record !== null && !s.record.revoked)
  for (const check of found) {
    for (const finding of check.findings)
      add(finding.code, finding.severity, `${check.selector}: ${finding.message}`)
  }
  if (dkim.wildcard) {
    add(
      'wildcard_selector',
      'medium',
      `The zone answers every selector under _domainkey.${findings.domain} (a wildcard), so keys found at guessed selectors may not be real.`,
    )
  }
  if (usable.length === 0) {
    const temporary = dkim.selectors.some((s) => s.status === 'temperror')
    add(
      temporary ? 'lookup_failed' : 'no_key_found',
      temporary ? 'medium' : 'high',
      temporary
        ? 'DKIM keys could not be read (DNS failure); the check will be repeated.'
        : `No DKIM key found among ${dkim.checked} selectors checked. If you sign mail, add your selectors in the domain settings (dkim_selectors); if not, enable DKIM at each sending service.`,
    )
    const status = temporary ? 'warning' : 'missing'
    return {
      issues,
      area: { status, summary: temporary ? 'DNS lookup failed' : 'No DKIM key found', record: null },
    }
  }
  const worst = issues.reduce((w, i) => Math.max(w, SEVERITY_RANK[i.severity]), 0)
  const status = worst >= SEVERITY_RANK.high ? 'error' : worst >= SEVERITY_RANK.low ? 'warning' : 'ok'
  const describe = usable.map(
    (s) =>
      `${s.selector} (${s.record?.key ? `${s.record.keyType} ${s.record.key.bits}` : s.record?.keyType})`,
  )
  return {
    issues,
    area: {
      status,
      summary: `${usable.length} key${usable.length > 1 ? 's' : ''}: ${describe.join(', ')}`,
      record: null,
    },
  }
}
