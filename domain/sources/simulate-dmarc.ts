// What-if for a proposed DMARC policy (issue #5): apply the proposed p/pct/t to the messages that
// failed DMARC in recent aggregate reports, and split what would be quarantined or rejected between
// sources that look legitimate (the collateral damage) and sources with no authentication at all
// (likely spoofing). Pure and synchronous: no DNS is needed. docs/simulation.md has the details.

import { type DmarcFinding, type DmarcPolicy, parseDmarcRecord } from '../dmarc/record.ts'
import { invalid, ok, type Result } from '../shared/result.ts'
import type { SourceStats } from './source-stats.ts'

export interface SimulateDmarcPolicyInput {
  proposedRecord: string
  sources: SourceStats[]
}

export interface Dispositions {
  quarantined: number
  rejected: number
}

export interface DmarcSourceSimulation {
  ip: string
  messages: number
  dmarcPass: number
  /** Messages that failed DMARC: the only ones a policy acts on (RFC 7489 §6.6.4). */
  failing: number
  /** Some DKIM or SPF pass (aligned or not), or a forwarding override: a real sender, probably. */
  looksLegitimate: boolean
  /** What the receivers reported applying. */
  current: Dispositions
  /** What the proposed record asks for, as expected message counts. */
  proposed: Dispositions
}

export interface DispositionGroup extends Dispositions {
  sources: number
  failing: number
}

export interface DmarcPolicyTotals {
  sources: number
  messages: number
  failing: number
  current: Dispositions
  proposed: Dispositions
  /** Failing mail from sources that look legitimate: what enforcing would cost. */
  collateral: DispositionGroup
  /** Failing mail from sources with no DKIM or SPF pass at all and no forwarding: what it would stop. */
  likelySpoofing: DispositionGroup
}

export interface DmarcPolicySimulation {
  proposedRecord: string
  /** The policy a receiver would read from p (RFC 9989 §4.7; none when p is absent). */
  policy: DmarcPolicy
  /** pct as published (RFC 7489 §6.3), 100 when absent or invalid. */
  pct: number
  /** t=y (RFC 9989 §4.7): the owner is testing, nothing is enforced. */
  testing: boolean
  /** What a failing message gets: `sampled` for pct% of them, `rest` for the others. */
  disposition: { sampled: DmarcPolicy; rest: DmarcPolicy }
  /** The parser's findings about the proposed record (historic tags, missing rua, ...). */
  findings: DmarcFinding[]
  /** By proposed quarantined + rejected (descending), then messages, then IP. */
  sources: DmarcSourceSimulation[]
  totals: DmarcPolicyTotals
}

// RFC 7489 §6.6.4: a message not selected by pct gets the next policy down.
const NEXT_LOWER: Record<DmarcPolicy, DmarcPolicy> = {
  reject: 'quarantine',
  quarantine: 'none',
  none: 'none',
}
// A written but unusable p/sp/np turns the whole policy into p=none (RFC 9989 §4.10.1): as a
// proposal, that is a typo to fix rather than a policy to simulate.
const UNUSABLE_POLICY = new Set(['invalid_policy', 'invalid_subdomain_policy', 'invalid_nonexistent_policy'])

export function simulateDmarcPolicy(input: SimulateDmarcPolicyInput): Result<DmarcPolicySimulation> {
  const proposedRecord = input.proposedRecord.trim()
  const parsed = parseDmarcRecord(proposedRecord)
  if (!parsed.ok) {
    const worst = parsed.findings.find((f) => f.severity === 'critical' || f.severity === 'high')
    return invalid('record', worst?.message ?? parsed.findings[0]?.message ?? 'Not a DMARC record.')
  }
  const unusable = parsed.findings.find((f) => UNUSABLE_POLICY.has(f.code))
  if (unusable !== undefined) return invalid('record', unusable.message)

  const { record } = parsed
  const policy = record.effective.p
  const pct = record.pct ?? 100
  // RFC 9989 §4.7: t=y asks receivers not to apply the policy while the owner tests it. (Receivers
  // that treat it like RFC 7489 pct=0 apply one level lower instead; docs/simulation.md.)
  const disposition = record.testing
    ? { sampled: 'none' as const, rest: 'none' as const }
    : { sampled: policy, rest: NEXT_LOWER[policy] }
  const share = record.testing ? 0 : pct / 100

  const sources = input.sources.map((source) => simulateSource(source, disposition, share))
  sources.sort(
    (a, b) =>
      affected(b.proposed) - affected(a.proposed) ||
      b.messages - a.messages ||
      (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0),
  )
  return ok({
    proposedRecord,
    policy,
    pct,
    testing: record.testing,
    disposition,
    findings: parsed.findings,
    sources,
    totals: totalsOf(sources),
  })
}

function simulateSource(
  source: SourceStats,
  disposition: { sampled: DmarcPolicy; rest: DmarcPolicy },
  share: number,
): DmarcSourceSimulation {
  const messages = Math.max(0, source.messages)
  const dmarcPass = Math.min(messages, Math.max(0, source.dmarcPass))
  const failing = messages - dmarcPass
  // pct selects messages at random (RFC 7489 §6.6.4), so these are expected counts, rounded per
  // source so that every figure is a whole number of messages and sampled + rest = failing.
  const sampled = Math.round(failing * share)
  const proposed: Dispositions = { quarantined: 0, rejected: 0 }
  apply(proposed, disposition.sampled, sampled)
  apply(proposed, disposition.rest, failing - sampled)
  return {
    ip: source.ip,
    messages,
    dmarcPass,
    failing,
    looksLegitimate: source.dkimPass > 0 || source.spfPass > 0 || source.forwarded > 0,
    current: { quarantined: source.quarantined, rejected: source.rejected },
    proposed,
  }
}

function apply(into: Dispositions, policy: DmarcPolicy, messages: number) {
  if (policy === 'quarantine') into.quarantined += messages
  if (policy === 'reject') into.rejected += messages
}

const affected = (d: Dispositions) => d.quarantined + d.rejected

function totalsOf(sources: readonly DmarcSourceSimulation[]): DmarcPolicyTotals {
  const group = (): DispositionGroup => ({ sources: 0, failing: 0, quarantined: 0, rejected: 0 })
  const totals: DmarcPolicyTotals = {
    sources: sources.length,
    messages: 0,
    failing: 0,
    current: { quarantined: 0, rejected: 0 },
    proposed: { quarantined: 0, rejected: 0 },
    collateral: group(),
    likelySpoofing: group(),
  }
  for (const s of sources) {
    totals.messages += s.messages
    totals.failing += s.failing
    totals.current.quarantined += s.current.quarantined
    totals.current.rejected += s.current.rejected
    totals.proposed.quarantined += s.proposed.quarantined
    totals.proposed.rejected += s.proposed.rejected
    // Only sources with failing mail are at stake; a clean source is neither collateral nor spoofing.
    if (s.failing === 0) continue
    const bucket = s.looksLegitimate ? totals.collateral : totals.likelySpoofing
    bucket.sources += 1
    bucket.failing += s.failing
    bucket.quarantined += s.proposed.quarantined
    bucket.rejected += s.proposed.rejected
  }
  return totals
}
