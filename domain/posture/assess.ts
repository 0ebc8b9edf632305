import type { Severity } from '../shared/finding.ts'
import { dkimIssues } from './dkim-issues.ts'
import { dmarcIssues, SEVERITY_RANK } from './dmarc-issues.ts'
import { mailIssues } from './mail-issues.ts'
import type { Grade, Posture, PostureContext, PostureFindings } from './posture.ts'
import { spfIssues } from './spf-issues.ts'

// The grade (docs/posture.md): start at 100 and subtract per issue by severity; then cap by what
// matters most for spoofing protection, because no amount of tidy records makes up for a missing
// DMARC policy.

export const DEDUCTION: Record<Severity, number> = { critical: 35, high: 20, medium: 8, low: 2, info: 0 }
const GRADES: Grade[] = ['A', 'B', 'C', 'D', 'F']

export function gradeOfScore(score: number): Grade {
  if (score >= 90) return 'A'
  if (score >= 75) return 'B'
  if (score >= 60) return 'C'
  if (score >= 40) return 'D'
  return 'F'
}

const worse = (a: Grade, b: Grade): Grade => (GRADES.indexOf(a) >= GRADES.indexOf(b) ? a : b)

export function assessPosture(findings: PostureFindings, context: PostureContext): Posture {
  const dmarc = dmarcIssues(findings, context)
  const spf = spfIssues(findings)
  const dkim = dkimIssues(findings)
  const mail = mailIssues(findings, context)
  const issues = [...dmarc.issues, ...spf.issues, ...dkim.issues, ...mail.issues].sort(
    (a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.code.localeCompare(b.code),
  )
  const score = Math.max(0, 100 - issues.reduce((sum, issue) => sum + DEDUCTION[issue.severity], 0))

  const applied = findings.dmarc.record === null ? null : findings.dmarc.appliedPolicy
  const policy = applied?.policy ?? 'missing'
  let cap: Grade = 'A'
  if (policy === 'missing') cap = worse(cap, 'F')
  else if (policy === 'none') cap = worse(cap, 'C')
  else if (policy === 'quarantine' || applied?.testing || (findings.dmarc.record?.pct ?? 100) < 100)
    cap = worse(cap, 'B')
  if (
    spf.area.status === 'missing' ||
    spf.issues.some((i) => SEVERITY_RANK[i.severity] >= SEVERITY_RANK.high)
  ) {
    cap = worse(cap, 'D')
  }
  if (dkim.area.status === 'missing') cap = worse(cap, 'C')

  return {
    domain: findings.domain,
    grade: worse(gradeOfScore(score), cap),
    score,
    dmarcPolicy: policy,
    areas: { dmarc: dmarc.area, spf: spf.area, dkim: dkim.area, mail: mail.area },
    issues,
  }
}
