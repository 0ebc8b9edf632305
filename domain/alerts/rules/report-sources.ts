import type { SourceInput } from '../../sources/recommendation.ts'
import { EVIDENCE_LIST_LIMIT } from '../alert.ts'

// What the report rules keep of a set of sources, whatever their number (docs/alerts.md, "How the
// report rules read their facts"): sums, the earliest first day, and the heaviest
// EVIDENCE_LIST_LIMIT sources (all the evidence lists show). Sources can be added a page at a time,
// so a domain-day of 100,000 sources is never held at once.

export interface ReportSource extends SourceInput {
  /** First day (YYYY-MM-DD) the IP was ever reported for the domain, not only within `stats`. */
  firstSeen: string
}

export interface SourceTally {
  sources: number
  messages: number
  dmarcPass: number
  /** Messages with neither a DKIM nor an SPF pass, aligned or not. */
  unauthenticated: number
  /** The earliest `firstSeen` of the sources. */
  firstSeen: string
  /** Heaviest first, then by IP (code-unit order); at most EVIDENCE_LIST_LIMIT. */
  top: ReportSource[]
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const heavier = (a: ReportSource, b: ReportSource) =>
  b.stats.messages - a.stats.messages || compareText(a.stats.ip, b.stats.ip)

/** Adds a source to a tally (a new one when `into` is undefined); returns the tally. */
export function tallySource(into: SourceTally | undefined, source: ReportSource): SourceTally {
  const tally = into ?? {
    sources: 0,
    messages: 0,
    dmarcPass: 0,
    unauthenticated: 0,
    firstSeen: source.firstSeen,
    top: [],
  }
  const { stats } = source
  tally.sources += 1
  tally.messages += stats.messages
  tally.dmarcPass += stats.dmarcPass
  if (stats.dkimPass === 0 && stats.spfPass === 0) tally.unauthenticated += stats.messages
  if (source.firstSeen < tally.firstSeen) tally.firstSeen = source.firstSeen
  const last = tally.top.at(-1)
  if (tally.top.length < EVIDENCE_LIST_LIMIT || (last !== undefined && heavier(source, last) < 0)) {
    const at = tally.top.findIndex((kept) => heavier(source, kept) < 0)
    tally.top.splice(at === -1 ? tally.top.length : at, 0, source)
    if (tally.top.length > EVIDENCE_LIST_LIMIT) tally.top.pop()
  }
  return tally
}

/** The evidence list of a tally: its heaviest IPs and how many more there are. */
export function ipList(tally: SourceTally) {
  return {
    ips: tally.top.map(({ stats }) => ({
      ip: stats.ip,
      ptr: stats.ptr,
      messages: stats.messages,
      dmarcPass: stats.dmarcPass,
    })),
    ipsOmitted: Math.max(0, tally.sources - EVIDENCE_LIST_LIMIT),
  }
}
