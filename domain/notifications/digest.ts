import type { AlertStore } from '../alerts/ports.ts'
import { describeLevel } from '../dmarc/hosting.ts'
import type { PolicyChange } from '../policy/ports.ts'
import type { Period } from '../reports/period.ts'
import type { FigureScope } from '../sources/ports.ts'
import type { SourceStats } from '../sources/source-stats.ts'
import { type DigestFrequency, digestPeriods } from './digest-schedule.ts'

// The digest's figures (issue #21, docs/notifications.md "Mail"): read through the report reader's
// summary (the same figures as GET /dmarc-reports/overview and a domain's summary), the source
// figures, the alerts and the policy store; nothing here queries reports itself.

/** The part of a report summary (pg-report-reader.ts `Summary`) the digest reads. */
export interface DigestSummary {
  totals: { messages: number; dmarc_pass: number; reports: number }
  rates: { dmarc_pass: number | null }
  daily: { day: string; messages: number; dmarc_pass: number }[]
  top_failing_sources: { source_ip: string; ptr: string | null; failing: number }[]
}

export interface DigestDeps {
  reports: { summary(accountId: string, domainId: number | null, period: Period): Promise<DigestSummary> }
  domains: {
    accountDomains(
      accountId: string,
    ): Promise<{ domainId: number; name: string; dmarcPolicy: string | null }[]>
  }
  sources: {
    stats(
      scope: FigureScope,
      period: Period,
    ): Promise<Pick<SourceStats, 'ip' | 'messages' | 'dmarcPass' | 'ptr'>[]>
    firstSeen(accountId: string, domainId: number, ips: readonly string[]): Promise<Map<string, string>>
  }
  alerts: Pick<AlertStore, 'list'>
  policy: { pending(accountId: string, domainId: number): Promise<PolicyChange | null> }
}

export interface DigestDomain {
  name: string
  messages: number
  passRate: number | null
  reports: number
  /** The published policy as the last check read it (none, quarantine, reject, missing); null: not checked yet. */
  policy: string | null
  /** A waiting proposal of the policy progression (`quarantine (pct=25)`), or null. */
  proposal: string | null
}

export interface Digest {
  frequency: DigestFrequency
  localDate: string
  period: Period
  previous: Period
  messages: number
  passRate: number | null
  previousPassRate: number | null
  /** Percentage points against the previous period; null when either has no mail. */
  passRateChange: number | null
  daily: { day: string; pass: number; fail: number }[]
  failingSources: { ip: string; ptr: string | null; failing: number }[]
  newSources: { domain: string; ip: string; ptr: string | null; messages: number; firstSeen: string }[]
  openAlerts: { severity: string; title: string; domain: string | null; number: number }[]
  openAlertCount: number
  domains: DigestDomain[]
  /** Domains without a single report in the period. */
  silentDomains: string[]
}

const LIST_LIMIT = 10
const DAY_MS = 86_400_000

/** Every day of the period, a day without reports as zero (the chart keeps its width). */
function daysOf(period: Period, daily: DigestSummary['daily']) {
  const byDay = new Map(daily.map((d) => [d.day, d]))
  const out: Digest['daily'] = []
  for (
    let t = Date.parse(`${period.from}T00:00:00Z`);
    t <= Date.parse(`${period.to}T00:00:00Z`);
    t += DAY_MS
  ) {
    const day = new Date(t).toISOString().slice(0, 10)
    const d = byDay.get(day)
    out.push({ day, pass: d?.dmarc_pass ?? 0, fail: (d?.messages ?? 0) - (d?.dmarc_pass ?? 0) })
  }
  return out
}

export async function buildDigest(
  deps: DigestDeps,
  input: { accountId: string; frequency: DigestFrequency; localDate: string },
): Promise<Digest> {
  const { accountId, frequency, localDate } = input
  const { current, previous } = digestPeriods(localDate, frequency)
  const [summary, before, domainList, open] = await Promise.all([
    deps.reports.summary(accountId, null, current),
    deps.reports.summary(accountId, null, previous),
    deps.domains.accountDomains(accountId),
    deps.alerts.list(accountId, { status: 'open' }, { page: 1, perPage: LIST_LIMIT }),
  ])
  const domains: DigestDomain[] = []
  const newSources: Digest['newSources'] = []
  for (const domain of domainList) {
    const [own, pending] = await Promise.all([
      deps.reports.summary(accountId, domain.domainId, current),
      deps.policy.pending(accountId, domain.domainId),
    ])
    domains.push({
      name: domain.name,
      messages: own.totals.messages,
      passRate: own.rates.dmarc_pass,
      reports: own.totals.reports,
      policy: domain.dmarcPolicy,
      proposal: pending === null ? null : describeLevel(pending.to),
    })
    const stats = await deps.sources.stats({ accountId, domainId: domain.domainId }, current)
    if (stats.length === 0) continue
    const first = await deps.sources.firstSeen(
      accountId,
      domain.domainId,
      stats.map((s) => s.ip),
    )
    for (const s of stats) {
      const seen = first.get(s.ip)
      if (seen !== undefined && seen >= current.from)
        newSources.push({ domain: domain.name, ip: s.ip, ptr: s.ptr, messages: s.messages, firstSeen: seen })
    }
  }
  const passRate = summary.rates.dmarc_pass
  const previousPassRate = before.rates.dmarc_pass
  return {
    frequency,
    localDate,
    period: current,
    previous,
    messages: summary.totals.messages,
    passRate,
    previousPassRate,
    passRateChange:
      passRate === null || previousPassRate === null
        ? null
        : Math.round((passRate - previousPassRate) * 100) / 100,
    daily: daysOf(current, summary.daily),
    failingSources: summary.top_failing_sources
      .slice(0, LIST_LIMIT)
      .map((s) => ({ ip: s.source_ip, ptr: s.ptr, failing: s.failing })),
    newSources: newSources.sort((a, b) => b.messages - a.messages).slice(0, LIST_LIMIT),
    openAlerts: open.items.map((a) => ({
      severity: a.severity,
      title: a.title,
      domain: a.domain,
      number: a.number,
    })),
    openAlertCount: open.total,
    domains,
    silentDomains: domains.filter((d) => d.reports === 0).map((d) => d.name),
  }
}
