import { describe, expect, test } from 'bun:test'
import { type DemoAggregate, demoReports } from '../../../domain/demo/demo-reports.ts'
import { DEMO_DOMAIN, DEMO_REPORTERS, isDemoDomain } from '../../../domain/demo/demo-world.ts'
import { withDemoZone } from '../../../domain/demo/demo-zone.ts'
import type { DnsResolver } from '../../../domain/dns/ports.ts'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { alignRecord, publicSuffixOrganizationalDomain } from '../../../domain/reports/alignment.ts'
import { parseFailureReport } from '../../../domain/reports/forensic.ts'
import { parseTlsRptReport } from '../../../domain/reports/tls-rpt.ts'
import { collect } from '../reports/aggregate-support.ts'

const NOW = new Date('2026-11-26T10:30:00Z')
const reports = demoReports({ domain: DEMO_DOMAIN, now: NOW, days: 30, seed: 7 })
const aggregates = reports.filter((r): r is DemoAggregate => r.kind === 'aggregate')
const chunksOf = (text: string) =>
  (async function* () {
    yield new TextEncoder().encode(text)
  })()

describe('demo reports', () => {
  test('one aggregate report a day from each reporter for the 30 days before today', () => {
    expect(aggregates).toHaveLength(30 * DEMO_REPORTERS.length)
    const today = Date.parse('2026-11-26T00:00:00Z') / 1000
    const days = new Set(aggregates.map((r) => r.begin))
    expect(days.size).toBe(30)
    expect(Math.max(...days)).toBe(today - 86_400)
    expect(Math.min(...days)).toBe(today - 30 * 86_400)
    for (const r of aggregates) expect(r.end).toBe(r.begin + 86_399)
    expect(new Set(aggregates.map((r) => r.reportId)).size).toBe(aggregates.length)
  })

  test('the same seed gives the same reports; another seed other figures', () => {
    const again = demoReports({ domain: DEMO_DOMAIN, now: NOW, days: 30, seed: 7 })
    expect(again).toEqual(reports)
    const other = demoReports({ domain: DEMO_DOMAIN, now: NOW, days: 30, seed: 8 })
    expect(other.map((r) => (r.kind === 'aggregate' ? r.xml : ''))).not.toEqual(
      reports.map((r) => (r.kind === 'aggregate' ? r.xml : '')),
    )
  })

  test('every aggregate report parses, and policy_evaluated agrees with the alignment the service computes', async () => {
    const alignment = { organizationalDomain: publicSuffixOrganizationalDomain() }
    let messages = 0
    let spoofed = 0
    for (const report of aggregates) {
      const parsed = await collect(parseAggregateReport(chunksOf(report.xml)))
      expect(parsed.error).toBeNull()
      expect(parsed.metadata!.reportId).toBe(report.reportId)
      expect(parsed.metadata!.policy.domain).toBe(DEMO_DOMAIN)
      for (const record of parsed.records) {
        const aligned = alignRecord(alignment, { record, policy: parsed.metadata!.policy })
        expect(record.dkimEvaluated).toBe(aligned.dkimAligned ? 'pass' : 'fail')
        expect(record.spfEvaluated).toBe(aligned.spfAligned ? 'pass' : 'fail')
        messages += record.count
        if (record.sourceIp.startsWith('185.220.') || record.sourceIp.startsWith('45.95.'))
          spoofed += record.count
      }
    }
    // Thousands of messages a working day, and a spoofer only in the last days.
    expect(messages).toBeGreaterThan(30_000)
    expect(spoofed).toBeGreaterThan(200)
    const early = aggregates.filter((r) => r.begin < Date.parse('2026-11-20T00:00:00Z') / 1000)
    for (const report of early) expect(report.xml).not.toContain('185.220.101.47')
  })

  test('failure reports are ARF auth-failure reports of the spoofer, TLS reports parse', () => {
    const failures = reports.filter((r) => r.kind === 'failure')
    expect(failures.length).toBeGreaterThanOrEqual(5)
    for (const report of failures) {
      const parsed = parseFailureReport({
        feedbackReport: report.feedbackReport,
        originalHeaders: report.originalHeaders,
        humanReadable: report.humanReadable,
        subject: null,
      })
      expect(parsed.ok).toBe(true)
      if (!parsed.ok) continue
      expect(parsed.report.feedbackType).toBe('auth-failure')
      expect(parsed.report.sourceIp).toBe(report.sourceIp)
      expect(parsed.report.reportedDomains).toEqual([DEMO_DOMAIN])
    }
    const tls = reports.filter((r) => r.kind === 'tls')
    expect(tls).toHaveLength(7)
    for (const report of tls) expect(parseTlsRptReport(report.json).ok).toBe(true)
  })
})

describe('the demo zone', () => {
  const asked: string[] = []
  const real: DnsResolver = {
    resolve: async (name) => {
      asked.push(name)
      return { status: 'nxdomain' }
    },
  }
  const dns = withDemoZone(real)

  test('answers the demo domain itself and passes every other name on', async () => {
    const dmarc = await dns.resolve(`_dmarc.${DEMO_DOMAIN}`, 'TXT')
    expect(dmarc.status).toBe('ok')
    if (dmarc.status === 'ok')
      expect(dmarc.records[0]).toMatchObject({ strings: [expect.stringMatching(/^v=DMARC1; p=none/)] })
    expect((await dns.resolve(`google._domainkey.${DEMO_DOMAIN}.`, 'TXT')).status).toBe('ok')
    expect((await dns.resolve(DEMO_DOMAIN, 'MX')).status).toBe('nodata')
    expect((await dns.resolve(`nothing.${DEMO_DOMAIN}`, 'TXT')).status).toBe('nxdomain')
    expect(asked).toEqual([])
    await dns.resolve('_spf.google.com', 'TXT')
    await dns.resolve(`x${DEMO_DOMAIN}`, 'TXT')
    expect(asked).toEqual(['_spf.google.com', `x${DEMO_DOMAIN}`])
  })

  test('the name is reserved', () => {
    expect(isDemoDomain(DEMO_DOMAIN)).toBe(true)
    expect(isDemoDomain(`www.${DEMO_DOMAIN}`)).toBe(false)
  })
})
