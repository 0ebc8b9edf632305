import { expect, test } from 'bun:test'
import type { Summary } from '../../domain/reports/aggregate-reads.ts'
import { domainReportSections } from '../../src/dashboard/domain-detail-views.ts'
import { reportsView } from '../../src/dashboard/report-views.ts'

// The overview's empty month (issue #17): where the account's latest report is, and a link to the
// list over the 30 days ending on it. Rendered from the view alone: the page test's accounts all
// have reports this month (tests/dashboard/report-pages*.test.ts).

const emptySummary: Summary = {
  totals: { messages: 0, dmarc_pass: 0, dkim_aligned: 0, spf_aligned: 0, reports: 0 },
  rates: { dmarc_pass: null, dkim_aligned: null, spf_aligned: null },
  daily: [],
  dispositions: [],
  top_failing_sources: [],
  reporters: [],
}
const viewer = { email: 'someone@example.com', csrfToken: 'x' }
const period = { from: '2026-10-27', to: '2026-11-25' }

test('an empty overview links to the 30 days that end on the latest report', () => {
  const html = String(
    reportsView({
      viewer,
      period,
      summary: emptySummary,
      domains: [],
      moreDomains: false,
      latest: new Date('2026-03-14T00:00:00Z'),
    }),
  )
  expect(html).toContain(
    'The latest report of your domains begins on <time datetime="2026-03-14T00:00:00.000Z">2026-03-14</time>.',
  )
  expect(html).toContain(
    '<a href="/reports/list?from=2026-02-13&amp;to=2026-03-14">Show 2026-02-13 to 2026-03-14</a>',
  )
})

test('no report at all, or a month with reports: no link', () => {
  const none = String(
    reportsView({ viewer, period, summary: emptySummary, domains: [], moreDomains: false, latest: null }),
  )
  expect(none).not.toContain('data-latest-report')
  const busy = String(
    reportsView({
      viewer,
      period,
      summary: { ...emptySummary, totals: { ...emptySummary.totals, reports: 2, messages: 5 } },
      domains: [],
      moreDomains: false,
      latest: new Date('2026-03-14T00:00:00Z'),
    }),
  )
  expect(busy).not.toContain('data-latest-report')
})

test('a domain page without reports this month links to the 30 days ending on its latest report', () => {
  const sources = { items: [], total: 0, volume: 0, recommendations: [] }
  const quiet = String(
    domainReportSections('brand.example', {
      period,
      summary: emptySummary,
      sources,
      latest: new Date('2026-06-02T00:00:00Z'),
    }),
  )
  expect(quiet).toContain('No reports in this period.')
  expect(quiet).toContain(
    '<a href="/reports/list?domain=brand.example&amp;from=2026-05-04&amp;to=2026-06-02">Show 2026-05-04 to 2026-06-02</a>',
  )
  // Never a report: the hint about rua= stays.
  const never = String(
    domainReportSections('brand.example', { period, summary: emptySummary, sources, latest: null }),
  )
  expect(never).toContain('Reports arrive once your DMARC record names a rua= address.')
  expect(never).not.toContain('data-latest-report')
})
