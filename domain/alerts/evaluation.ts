import type { DnsResolver } from '../dns/ports.ts'
import type { Posture } from '../posture/posture.ts'
import { classifyStats } from '../sources/list-sources.ts'
import { resolveSpfTree } from '../spf/include-tree.ts'
import { type AlertCandidate, type AlertType, mergeScopes, type RuleScope } from './alert.ts'
import { type AlertScope, reconcile } from './lifecycle.ts'
import type {
  AlertDomain,
  AlertFacts,
  AlertFigures,
  AlertStore,
  AppliedPlan,
  DomainRef,
  OperationsFacts,
  ReportSourceFacts,
} from './ports.ts'
import { CHANGE_ALERT_TYPES, changeAlerts, changeScope } from './rules/changes.ts'
import {
  DNS_READ_SCOPE,
  DNS_WRITE_SCOPE,
  dnsReadAlerts,
  dnsWriteAlerts,
  type NoReportsInput,
  noReportsAlerts,
  noReportsScope,
  QUARANTINE_SCOPE,
  quarantineAlerts,
  SPF_WRITE_SCOPE,
  spfWriteAlerts,
  WEBHOOK_SCOPE,
  webhookAlerts,
} from './rules/operations.ts'
import { POSTURE_ALERT_TYPES, postureAlerts, postureScope } from './rules/posture.ts'
import {
  failureReportAlerts,
  reportScope,
  type SourceSummary,
  summarize,
  summaryAlerts,
} from './rules/reports.ts'
import { recordSnapshot } from './snapshot.ts'

// The alert evaluations the jobs run (docs/alerts.md, "Storage, jobs and API"): read the stored
// facts, run the pure rules, reconcile with the open alerts and apply the plan with its events.
//
// Evaluations may run more than once over the same facts (the schedulers look back further than
// their interval, so that a late or retried run misses nothing); they are idempotent because the
// state rules reconcile to the same plan and the event rules remember, in their alerts' evidence,
// how far they have reported (`detectedAt` of the change rules, `latestAt` of the failure reports).

export interface EvaluationDeps {
  alerts: AlertStore
  facts: AlertFacts
  operations: OperationsFacts
  figures: AlertFigures
  reportSources: ReportSourceFacts
  now: () => Date
  /** The SPF include tree classifies sources the same way the sources list does. */
  dns: DnsResolver
}

/** The posture scheduler runs every 15 minutes and evaluates the checks of the last hour. */
export const POSTURE_LOOKBACK_MS = 3_600_000
const DAY_MS = 86_400_000
/** The report rules' longest window (7 days ending yesterday). */
export const REPORT_WINDOW_DAYS = 7
/** Sources read and classified at a time: bounds the memory and the CPU slice of one step. */
export const REPORT_SOURCE_PAGE = 500

const NO_FAMILY: RuleScope = { rulesEvaluated: [] }
const REPORT_TYPES: readonly AlertType[] = reportScope().rulesEvaluated

async function apply(
  { alerts }: EvaluationDeps,
  ref: { accountId: string; domainId: number | null },
  candidates: readonly AlertCandidate[],
  scope: AlertScope,
  now: Date,
): Promise<AppliedPlan> {
  const open = await alerts.openAlerts(ref.accountId, ref.domainId)
  return alerts.applyPlan(ref.accountId, ref.domainId, reconcile(open, candidates, scope, now), now)
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const keyOf = (alert: { type: string; subject: string }) => `${alert.type}\u0000${alert.subject}`

/** What a run changed, summed over its plans (for the job's log line). */
const tally = (): AppliedPlan => ({ created: 0, updated: 0, resolved: 0 })
function add(total: AppliedPlan, applied: AppliedPlan): void {
  total.created += applied.created
  total.updated += applied.updated
  total.resolved += applied.resolved
}

/**
 * Posture and change rules for the domain's checks stored in the last POSTURE_LOOKBACK_MS:
 * every consecutive pair of checks not yet reported goes through the change rules, oldest first
 * (so a check made between two evaluations, by the API's status refresh for instance, is compared
 * too), then the latest check through the posture rules.
 */
export async function evaluatePosture(deps: EvaluationDeps, ref: DomainRef): Promise<AppliedPlan> {
  const { alerts, facts } = deps
  const now = deps.now()
  const domain = await facts.domain(ref.accountId, ref.domainId)
  if (domain === null) return tally()
  const since = new Date(now.getTime() - POSTURE_LOOKBACK_MS)
  const checks = await facts.checksSince(ref.accountId, ref.domainId, since)
  const latest = checks.at(-1)
  if (latest === undefined || latest.checkedAt < since) return tally()
  const total = tally()

  // Change alerts carry the time of the check that showed the change: pairs up to the newest one
  // already reported were evaluated before, and evaluating them again would re-open alerts the
  // user resolved (or clear a newer removal with an older check).
  let reported = await facts.latestEvidenceTime(ref.accountId, ref.domainId, CHANGE_ALERT_TYPES, 'detectedAt')
  for (let i = 1; i < checks.length; i++) {
    const current = recordSnapshot(checks[i]!.findings)
    const at = Date.parse(current.checkedAt)
    if (checks[i]!.checkedAt < since || (reported !== null && at <= reported.getTime())) continue
    const input = { domain: domain.name, previous: recordSnapshot(checks[i - 1]!.findings), current }
    const candidates = changeAlerts(input)
    add(total, await apply(deps, ref, candidates, { ...changeScope(input), domain: domain.name }, now))
    if (candidates.length > 0) reported = new Date(at)
  }

  const input = { posture: latest.posture, findings: latest.findings }
  // An alert the user resolved after this check was made is not opened again from this check: the
  // user knows something newer (a record just published). The next check decides.
  const open = await alerts.openAlerts(ref.accountId, ref.domainId)
  const openKeys = new Set(open.map(keyOf))
  const muted = new Set(
    (await facts.userResolvedSince(ref.accountId, ref.domainId, POSTURE_ALERT_TYPES, latest.checkedAt))
      .map(keyOf)
      .filter((key) => !openKeys.has(key)),
  )
  const candidates = postureAlerts(input).filter((c) => !muted.has(keyOf(c)))
  const scope = { ...postureScope(input), domain: domain.name }
  add(
    total,
    await alerts.applyPlan(ref.accountId, ref.domainId, reconcile(open, candidates, scope, now), now),
  )
  return total
}

/**
 * Report rules over the aggregate figures: daily totals of the 7 days ending yesterday (UTC) and
 * yesterday's sources, classified as the sources list classifies them. The sources are read a page
 * at a time and folded into a bounded summary (rules/reports.ts, `summarize`): never all at once.
 */
/** The day whose sources the report rules read: the last whole UTC day before `now`. */
export function reportRulesDay(now: Date): string {
  return isoDay(Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAY_MS)
}

export async function evaluateReports(deps: EvaluationDeps, ref: DomainRef): Promise<AppliedPlan> {
  const { facts, figures, reportSources } = deps
  const now = deps.now()
  const domain = await facts.domain(ref.accountId, ref.domainId)
  if (domain === null) return tally()
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS
  const yesterday = reportRulesDay(now)
  const [daily, day, overrides] = await Promise.all([
    figures.daily(ref, { from: isoDay(today - REPORT_WINDOW_DAYS * DAY_MS), to: yesterday }),
    reportSources.dayVolume(ref, yesterday),
    figures.overrides(ref),
  ])
  const spfTree = day.sources === 0 ? null : await resolveSpfTree({ dns: deps.dns }, domain.name)
  const summary: SourceSummary = { volume: day.messages, unknown: new Map(), spoofing: undefined }
  let afterIp: string | null = null
  while (day.sources > 0) {
    const page = await reportSources.sourcePage(ref, yesterday, {
      afterIp,
      limit: REPORT_SOURCE_PAGE,
      volume: day.messages,
    })
    const firstSeen = new Map(page.map((s) => [s.stats.ip, s.firstSeen]))
    const views = classifyStats({ domain: domain.name, stats: page.map((s) => s.stats), overrides, spfTree })
    summarize(
      summary,
      views.map(({ stats, classification, status }) => ({
        stats,
        classification,
        status,
        firstSeen: firstSeen.get(stats.ip) ?? stats.firstSeen,
      })),
    )
    if (page.length < REPORT_SOURCE_PAGE) break
    afterIp = page.at(-1)!.stats.ip
  }
  const candidates = summaryAlerts({
    domain: domain.name,
    now,
    daily,
    summary,
    policy: domain.dmarcPolicy ?? 'missing',
  })
  return apply(deps, ref, candidates, { ...reportScope(), domain: domain.name }, now)
}

/** Whether the check's DMARC record sends aggregate reports to this account; null when unknown. */
export function ruaPointsHere(posture: Posture | null): boolean | null {
  if (posture === null) return null
  const has = (code: string) => posture.issues.some((issue) => issue.code === code)
  if (has('dmarc.lookup_failed')) return null
  return posture.dmarcPolicy !== 'missing' && !has('dmarc.no_rua') && !has('dmarc.reports_not_to_dmarcwatch')
}

const later = (a: Date, b: Date | null) => (b !== null && b > a ? b : a)

/**
 * `no_reports` and `failure_report_received` for one domain. Reports are stored for verified
 * domains only (a report for an unverified one is quarantined), so silence is judged from the
 * verification on, and not at all before it.
 */
async function domainOperations(
  deps: EvaluationDeps,
  accountId: string,
  domain: AlertDomain,
  now: Date,
): Promise<AppliedPlan> {
  const { facts, operations } = deps
  const ref = { accountId, domainId: domain.domainId }
  let noReports: { candidates: AlertCandidate[]; scope: RuleScope } = { candidates: [], scope: NO_FAMILY }
  if (domain.verifiedAt !== null) {
    const [lastReportAt, posture] = await Promise.all([
      facts.lastAggregateReportAt(accountId, domain.domainId, now),
      facts.latestPosture(accountId, domain.domainId),
    ])
    const pointsHere = ruaPointsHere(posture)
    const ruaSince =
      lastReportAt === null && pointsHere === true
        ? await facts.ruaPointsHereSince(accountId, domain.domainId)
        : null
    const input: NoReportsInput = {
      domain: domain.name,
      now,
      lastReportAt,
      ruaPointsHere: pointsHere,
      expectedSince: later(ruaSince ?? domain.createdAt, domain.verifiedAt),
    }
    noReports = { candidates: noReportsAlerts(input), scope: noReportsScope(input) }
  }
  // The failure reports after the last resolved episode: while an alert is open it keeps counting.
  const after = await facts.latestEvidenceTime(
    accountId,
    domain.domainId,
    ['failure_report_received'],
    'latestAt',
    'resolved',
  )
  const newReports = await operations.failureReportsAfter(accountId, domain.domainId, after)
  const candidates = [...noReports.candidates, ...failureReportAlerts({ domain: domain.name, newReports })]
  // failure_report_received is an event type: it is never in a scope, the user resolves it.
  const scope = { ...mergeScopes(noReports.scope, NO_FAMILY), domain: domain.name }
  return apply(deps, ref, candidates, scope, now)
}

/**
 * The operations rules of one account: webhook delivery and ingest quarantine (account-wide, no
 * domain), then `no_reports` and failure reports for each of its domains.
 */
export async function evaluateAccount(deps: EvaluationDeps, accountId: string): Promise<AppliedPlan> {
  const { facts, operations } = deps
  const now = deps.now()
  const [webhook, quarantine, failingWrites, failingReads, spfWrites] = await Promise.all([
    operations.webhookFacts(accountId),
    operations.quarantine(accountId, now),
    operations.failingWrites(accountId),
    operations.failingReads(accountId),
    operations.pendingSpfWrites(accountId, now),
  ])
  const total = tally()
  add(
    total,
    await apply(
      deps,
      { accountId, domainId: null },
      [
        ...webhookAlerts(webhook),
        ...quarantineAlerts(quarantine),
        ...dnsWriteAlerts(failingWrites),
        ...dnsReadAlerts(failingReads),
        ...spfWriteAlerts(spfWrites),
      ],
      {
        ...mergeScopes(WEBHOOK_SCOPE, QUARANTINE_SCOPE, DNS_WRITE_SCOPE, DNS_READ_SCOPE, SPF_WRITE_SCOPE),
        domain: null,
      },
      now,
    ),
  )
  for (const domain of await facts.accountDomains(accountId))
    add(total, await domainOperations(deps, accountId, domain, now))
  return total
}

/** What the schedulers enqueue: one job per domain (posture, reports) or account (operations). */
export function alertWork(deps: EvaluationDeps) {
  const { facts, operations } = deps
  return {
    postureDue: () => facts.domainsCheckedSince(new Date(deps.now().getTime() - POSTURE_LOOKBACK_MS)),
    reportsDue: () => {
      const today = Math.floor(deps.now().getTime() / DAY_MS) * DAY_MS
      return facts.domainsWithReports(isoDay(today - REPORT_WINDOW_DAYS * DAY_MS), REPORT_TYPES)
    },
    accountsDue: () => operations.activeAccounts(),
  }
}
