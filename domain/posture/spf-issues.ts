import type { Severity } from '../shared/finding.ts'
import type { SpfWarningCode } from '../spf/warnings.ts'
import { SEVERITY_RANK } from './dmarc-issues.ts'
import type { AreaReport, Fix, PostureFindings, PostureIssue } from './posture.ts'

// SPF issues from the analysis (RFC 7208). Severity follows the consequence: a record that
// evaluates to permerror or authorises everyone is as bad as none at all.

const SEVERITY: Partial<Record<SpfWarningCode, Severity>> = {
  no_record: 'high',
  multiple_records: 'critical',
  syntax_error: 'critical',
  include_loop: 'critical',
  include_not_found: 'high',
  redirect_not_found: 'high',
  invalid_target: 'high',
  lookup_limit_exceeded: 'high',
  void_lookup_limit_exceeded: 'high',
  all_pass: 'critical',
  all_neutral: 'medium',
  no_all: 'medium',
  dns_error: 'medium',
  ptr_used: 'low',
  mx_limit_exceeded: 'medium',
  record_too_long: 'low',
  duplicate_network: 'info',
  overlapping_network: 'info',
  void_lookup: 'low',
  redirect_ignored: 'low',
  unknown_modifier: 'info',
  analysis_truncated: 'medium',
}

function replaceAll(record: string, to: string): string {
  return record.replace(/(^|\s)[+?~-]?all(?=\s|$)/i, `$1${to}`)
}

export function spfIssues(findings: PostureFindings): { issues: PostureIssue[]; area: AreaReport } {
  const { spf, mx } = findings
  const issues: PostureIssue[] = []
  const seen = new Set<string>()
  for (const warning of spf.warnings) {
    const key = `${warning.code}|${warning.domain}|${warning.term ?? ''}`
    if (seen.has(key)) continue
    seen.add(key)
    const severity =
      SEVERITY[warning.code] ??
      (warning.severity === 'error' ? 'high' : warning.severity === 'warning' ? 'medium' : 'info')
    let fix: Fix | undefined
    const own = warning.domain === findings.domain && spf.record !== null
    if (warning.code === 'no_record') {
      fix = {
        type: 'TXT',
        name: findings.domain,
        value: mx.status === 'ok' ? 'v=spf1 mx ~all' : 'v=spf1 -all',
        note:
          mx.status === 'ok'
            ? 'Authorises your MX hosts; add include: terms for every service that sends as this domain.'
            : 'The domain receives no mail; if it sends none either, this says so.',
      }
    } else if (own && warning.code === 'all_pass') {
      fix = {
        type: 'TXT',
        name: findings.domain,
        value: replaceAll(spf.record!, '~all'),
        note: '+all authorises every host on the Internet.',
      }
    } else if (own && (warning.code === 'all_neutral' || warning.code === 'no_all')) {
      fix = {
        type: 'TXT',
        name: findings.domain,
        value: warning.code === 'no_all' ? `${spf.record!} ~all` : replaceAll(spf.record!, '~all'),
      }
    } else if (
      warning.code === 'lookup_limit_exceeded' &&
      spf.flattened !== null &&
      spf.flattened.records[0]
    ) {
      const root = spf.flattened.records[0]
      fix = {
        type: 'TXT',
        name: root.name,
        value: root.text,
        note: `A flattened equivalent (${spf.flattened.lookupsAfter} lookups instead of ${spf.flattened.lookupsBefore}); provider ranges change, so let dmarcwatch manage it.`,
      }
    }
    issues.push({
      code: `spf.${warning.code}`,
      area: 'spf',
      severity,
      message: warning.message,
      ...(fix ? { fix } : {}),
    })
  }
  const worst = issues.reduce((w, i) => Math.max(w, SEVERITY_RANK[i.severity]), 0)
  if (spf.record === null) {
    const failed = spf.warnings.some((w) => w.code === 'dns_error')
    return {
      issues,
      area: {
        status: failed ? 'warning' : 'missing',
        summary: failed ? 'DNS lookup failed' : 'No SPF record',
        record: null,
      },
    }
  }
  const status = worst >= SEVERITY_RANK.high ? 'error' : worst >= SEVERITY_RANK.low ? 'warning' : 'ok'
  const summary = `${spf.lookups}/${spf.lookupLimit} DNS lookups, ${spf.voidLookups} void`
  return { issues, area: { status, summary, record: spf.record } }
}
