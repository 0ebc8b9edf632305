// One severity scale for every finding, alert and posture issue (docs/alerts.md, severities).
export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical'

export interface Finding<Code extends string = string> {
  code: Code
  severity: Severity
  message: string
}
