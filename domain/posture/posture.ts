import type { DkimSelectorsReport } from '../dkim/selectors.ts'
import type { DmarcDiscovery } from '../dmarc/discovery.ts'
import type { ReportAuthorization } from '../dmarc/report-authorization.ts'
import type { BimiLookup } from '../mail/bimi.ts'
import type { MtaStsFinding, MtaStsLookup } from '../mail/mta-sts.ts'
import type { TlsRptLookup } from '../mail/tls-rpt.ts'
import type { Severity } from '../shared/finding.ts'
import type { SpfAnalysis } from '../spf/analysis.ts'

// What one posture check found (kept as history) and what it means for the owner (the status).

export type AreaName = 'dmarc' | 'spf' | 'dkim' | 'mail'
export type AreaState = 'ok' | 'warning' | 'error' | 'missing'
export type Grade = 'A' | 'B' | 'C' | 'D' | 'F'

/** The exact DNS change that fixes an issue. */
export interface Fix {
  type: 'TXT'
  name: string
  value: string
  /** What the change does, when the record alone does not say it. */
  note?: string
}

export interface PostureIssue {
  /** Stable, area-prefixed: `dmarc.no_record`, `spf.lookup_limit_exceeded`, ... */
  code: string
  area: AreaName
  severity: Severity
  message: string
  fix?: Fix
}

export interface AreaReport {
  status: AreaState
  /** One line a person can read: "p=reject, reports to 2 addresses". */
  summary: string
  record: string | null
}

export interface Posture {
  domain: string
  grade: Grade
  score: number
  /** The published policy that applies to the domain itself; `missing` when none does. */
  dmarcPolicy: 'none' | 'quarantine' | 'reject' | 'missing'
  areas: Record<AreaName, AreaReport>
  issues: PostureIssue[]
}

export interface MxFindings {
  status: 'ok' | 'none' | 'null_mx' | 'temperror'
  hosts: { preference: number; exchange: string }[]
}

export interface MtaStsFindings {
  lookup: MtaStsLookup
  /** The policy file: fetched only when the TXT record exists. */
  policy:
    | { status: 'ok'; mode: string | null; findings: MtaStsFinding[] }
    | { status: 'unavailable'; reason: string }
    | null
}

/** Everything a check learned; stored as the findings history and re-assessable later. */
export interface PostureFindings {
  domain: string
  checkedAt: string
  dmarc: DmarcDiscovery
  reportAuthorization: ReportAuthorization | null
  spf: SpfAnalysis
  dkim: DkimSelectorsReport & { wildcard: boolean }
  mx: MxFindings
  mtaSts: MtaStsFindings
  tlsRpt: TlsRptLookup
  bimi: BimiLookup | null
  /** The resolver vouched (AD bit) for the domain's data; null when it could not tell. */
  dnssec: boolean | null
}

/** What the posture needs besides the findings: who is asking and where their reports go. */
export interface PostureContext {
  /** The account's report address (`<key>@<INGEST_DOMAIN>`), suggested in rua= and TLS-RPT fixes. */
  reportAddress: string
}
