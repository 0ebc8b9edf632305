import { type DmarcPolicy, type DmarcRecord, parseDmarcRecord } from '../../dmarc/record.ts'
import { SEVERITY_RANK } from '../../posture/dmarc-issues.ts'
import type { Severity } from '../../shared/finding.ts'
import type { AlertCandidate, AlertType, RuleScope } from '../alert.ts'
import type { RecordKind, RecordSnapshot, SnapshotRecord } from '../snapshot.ts'

// Change rules: what differs between the records of the previous check and this one. A change is
// an event, not a state (USER_RESOLVED_TYPES): `dns_record_changed` and `dmarc_weakened` stay open
// until the user resolves them, and a further change updates the open alert. A removal is a state
// that can end: `dns_record_removed` resolves itself once the record is published again.

export interface ChangeAlertInput {
  domain: string
  /** The snapshot of the check before this one; null for a domain's first check. */
  previous: RecordSnapshot | null
  current: RecordSnapshot
}

export const CHANGE_ALERT_TYPES = [
  'dns_record_changed',
  'dns_record_removed',
  'dmarc_weakened',
] as const satisfies readonly AlertType[]

/**
 * DMARC and SPF decide whether mail passes; a DKIM key change is often a routine rotation; the
 * transport and brand records (MTA-STS, TLS-RPT, BIMI) do not affect authentication.
 */
export const CHANGED_SEVERITY: Record<RecordKind, Severity> = {
  dmarc: 'medium',
  spf: 'medium',
  dkim: 'low',
  mta_sts: 'low',
  tls_rpt: 'low',
  bimi: 'low',
}
/** A removed MTA-STS TXT record stops senders refreshing the policy (RFC 8461 §3.1). */
export const REMOVED_SEVERITY: Record<RecordKind, Severity> = {
  dmarc: 'high',
  spf: 'high',
  dkim: 'medium',
  mta_sts: 'medium',
  tls_rpt: 'low',
  bimi: 'low',
}
/** A record published where there was none is worth knowing, not worth worrying about. */
export const ADDED_SEVERITY: Severity = 'info'

const LABEL: Record<RecordKind, string> = {
  dmarc: 'DMARC record',
  spf: 'SPF record',
  dkim: 'DKIM key',
  mta_sts: 'MTA-STS record',
  tls_rpt: 'TLS-RPT record',
  bimi: 'BIMI record',
}

const POLICY_RANK: Record<DmarcPolicy, number> = { none: 0, quarantine: 1, reject: 2 }

export interface Weakening {
  tag: 'p' | 'sp' | 'np' | 'pct' | 't' | 'adkim' | 'aspf'
  from: string
  to: string
}

/**
 * Every way the new record asks receivers for less than the old one: a lower policy for the domain,
 * its subdomains or non-existent subdomains (RFC 9989 §4.7, §4.10.1, as receivers apply them),
 * t=y (one level below the policy), a lower pct (RFC 7489 §6.3), relaxed alignment (RFC 9989 §4.4).
 */
export function dmarcWeakenings(before: DmarcRecord, after: DmarcRecord): Weakening[] {
  const out: Weakening[] = []
  for (const tag of ['p', 'sp', 'np'] as const) {
    const from = before.effective[tag]
    const to = after.effective[tag]
    if (POLICY_RANK[to] < POLICY_RANK[from]) out.push({ tag, from, to })
  }
  const fromPct = before.pct ?? 100
  const toPct = after.pct ?? 100
  if (toPct < fromPct) out.push({ tag: 'pct', from: String(fromPct), to: String(toPct) })
  if (after.testing && !before.testing) out.push({ tag: 't', from: 'n', to: 'y' })
  for (const tag of ['adkim', 'aspf'] as const) {
    if (before[tag] === 's' && after[tag] === 'r') out.push({ tag, from: 's', to: 'r' })
  }
  return out
}

/** The domain's own policy is the one that protects it; the rest narrows or tests it. */
const WEAKENING_SEVERITY: Record<Weakening['tag'], Severity> = {
  p: 'high',
  sp: 'medium',
  np: 'medium',
  pct: 'medium',
  t: 'medium',
  adkim: 'low',
  aspf: 'low',
}

function weakened(
  domain: string,
  before: SnapshotRecord,
  after: SnapshotRecord,
  at: string,
): AlertCandidate[] {
  const old = parseDmarcRecord(before.value ?? '')
  const now = parseDmarcRecord(after.value ?? '')
  // An unusable new record is dmarc_invalid's to report; an unusable old one gives no baseline.
  if (!old.ok || !now.ok) return []
  const weakenings = dmarcWeakenings(old.record, now.record)
  if (weakenings.length === 0) return []
  const severity = weakenings
    .map((w) => WEAKENING_SEVERITY[w.tag])
    .reduce((a, b) => (SEVERITY_RANK[b] > SEVERITY_RANK[a] ? b : a))
  return [
    {
      type: 'dmarc_weakened',
      subject: '',
      severity,
      title: `The DMARC policy of ${domain} was weakened: ${weakenings.map((w) => `${w.tag}=${w.from} → ${w.tag}=${w.to}`).join(', ')}`,
      details: {
        evidence: {
          name: after.name,
          previous: before.value,
          current: after.value,
          weakenings,
          detectedAt: at,
        },
        remedy:
          'If you did not make this change, restore the previous record and find out who can edit your DNS. If you did, resolve this alert.',
      },
    },
  ]
}

export function changeAlerts({ domain, previous, current }: ChangeAlertInput): AlertCandidate[] {
  if (previous === null) return []
  const out: AlertCandidate[] = []
  for (const subject of Object.keys(current.records).sort()) {
    const before = previous.records[subject]
    const after = current.records[subject]!
    // Unknown before (not probed, DNS failure): nothing to compare with.
    if (before === undefined || before.value === after.value) continue
    const label = LABEL[after.kind]
    const selector = after.kind === 'dkim' ? ` ${subject.slice('dkim:'.length)}` : ''
    const evidence = {
      name: after.name,
      previous: before.value,
      current: after.value,
      previousCheckAt: previous.checkedAt,
      detectedAt: current.checkedAt,
    }
    if (after.value === null) {
      out.push({
        type: 'dns_record_removed',
        subject,
        severity: REMOVED_SEVERITY[after.kind],
        title: `The ${label}${selector} of ${domain} was removed`,
        details: {
          evidence,
          remedy: `If the removal was not intended, publish the previous record at ${after.name} again. This alert resolves itself once a record is back.`,
        },
      })
      continue
    }
    const added = before.value === null
    out.push({
      type: 'dns_record_changed',
      subject,
      severity: added ? ADDED_SEVERITY : CHANGED_SEVERITY[after.kind],
      title: `The ${label}${selector} of ${domain} was ${added ? 'published' : 'changed'}`,
      details: {
        evidence: { ...evidence, change: added ? 'added' : 'modified' },
        remedy:
          'Check that the change was yours (or your DNS provider’s on your behalf); if not, restore the previous record and review who can edit the zone. Resolve this alert once checked.',
      },
    })
    if (after.kind === 'dmarc' && !added) out.push(...weakened(domain, before, after, current.checkedAt))
  }
  return out
}

/**
 * A removal alert may clear only for a record this check found present; changes and weakenings are
 * events and never clear by themselves (lifecycle.ts leaves USER_RESOLVED_TYPES alone anyway).
 */
export function changeScope({ current }: ChangeAlertInput): RuleScope {
  const present = Object.entries(current.records)
    .filter(([, record]) => record.value !== null)
    .map(([subject]) => subject)
  return { rulesEvaluated: ['dns_record_removed'], subjects: { dns_record_removed: { only: present } } }
}
