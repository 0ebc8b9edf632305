import { expect, test } from 'bun:test'
import {
  type ReportAlertInput,
  type ReportSource,
  type SourceSummary,
  spoofingAlerts,
  summarize,
  summaryAlerts,
  unknownSourceAlerts,
} from '../../../domain/alerts/rules/reports.ts'
import type { ClassifiedService, SourceStatus } from '../../../domain/sources/classify.ts'
import { referenceSpoofing, referenceUnknown } from './report-rules-reference.ts'

// The source rules over the bounded summary (read a page at a time, issue #20) raise exactly what
// they raised over every source in one list (report-rules-reference.ts): the same alerts, titles
// and evidence, on random days of sources with groups larger than the evidence lists.

const NOW = new Date('2026-05-10T08:00:00Z')
const service = (id: string, forwarder = false): ClassifiedService => ({
  id,
  name: id.toUpperCase(),
  category: 'transactional',
  docs: 'https://example.com',
  forwarder,
})
const SERVICES = [null, null, null, service('sendgrid'), service('mailgun'), service('listserv', true)]
const STATUSES: SourceStatus[] = ['unknown', 'unknown', 'suspicious', 'suspicious', 'legitimate', 'forwarder']
const DAYS = ['2026-05-09', '2026-05-05', '2026-05-02', '2026-04-01']

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function generator(seed: number) {
  let a = seed
  const next = () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, pick: <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]! }
}

function randomDay(seed: number): ReportSource[] {
  const { next, pick } = generator(seed)
  const count = Math.floor(next() * 400)
  return Array.from({ length: count }, (_, i) => {
    const messages = pick([0, 1, 3, 10, 10, 10, 50, 101, 200, Math.floor(next() * 600)])
    const dmarcPass = next() < 0.5 ? 0 : Math.floor(next() * (messages + 1))
    return {
      stats: {
        ip: `198.51.${Math.floor(i / 250)}.${i % 250}`,
        messages,
        dmarcPass,
        dkimAligned: dmarcPass,
        spfAligned: 0,
        dkimPass: next() < 0.5 ? 0 : dmarcPass,
        spfPass: next() < 0.7 ? 0 : messages,
        forwarded: next() < 0.1 ? 1 : 0,
        quarantined: 0,
        rejected: 0,
        firstSeen: '2026-05-09',
        lastSeen: '2026-05-09',
        ptr: next() < 0.3 ? `host${i}.example.net` : null,
        dkimDomains: [],
        spfDomains: [],
      },
      classification: { service: pick(SERVICES), confidence: 'low', evidence: [] },
      status: pick(STATUSES),
      firstSeen: pick(DAYS),
    }
  })
}

test('the rules over the summary, whole or in pages, raise what they raised over the list', () => {
  let raised = 0
  let cut = 0
  for (let seed = 1; seed <= 300; seed++) {
    const sources = randomDay(seed)
    const input: ReportAlertInput = { domain: 'example.com', now: NOW, daily: [], sources, policy: 'none' }
    const expected = [...referenceUnknown(input), ...referenceSpoofing(input)]
    expect([...unknownSourceAlerts(input), ...spoofingAlerts(input)]).toEqual(expected)

    // In pages of a random size, in IP order, as evaluateReports reads them.
    const volume = sources.reduce((total, s) => total + s.stats.messages, 0)
    const summary: SourceSummary = { volume, unknown: new Map(), spoofing: undefined }
    const size = 1 + (seed % 37)
    for (let at = 0; at < sources.length; at += size) summarize(summary, sources.slice(at, at + size))
    expect(summaryAlerts({ ...input, summary })).toEqual(expected)
    raised += expected.length
    cut += expected.filter((c) => (c.details.evidence as { ipsOmitted: number }).ipsOmitted > 0).length
  }
  // The random days do raise alerts, with evidence lists cut at 20.
  expect(raised).toBeGreaterThan(300)
  expect(cut).toBeGreaterThan(100)
})
