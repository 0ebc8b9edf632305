import { describe, expect, test } from 'bun:test'
import {
  failureRateAlerts,
  failureReportAlerts,
  type ReportAlertInput,
  type ReportSource,
  reportAlerts,
  spoofingAlerts,
  unknownSourceAlerts,
} from '../../../domain/alerts/rules/reports.ts'
import type { ClassifiedService } from '../../../domain/sources/classify.ts'
import type { DailyVolume } from '../../../domain/sources/policy-readiness.ts'

const NOW = new Date('2026-05-10T08:00:00Z')
const SENDGRID: ClassifiedService = {
  id: 'sendgrid',
  name: 'SendGrid',
  category: 'transactional',
  docs: 'https://www.twilio.com/docs/sendgrid',
  forwarder: false,
}

function source(
  ip: string,
  fields: Partial<ReportSource['stats']> & { messages: number },
  extra: Partial<ReportSource> = {},
): ReportSource {
  return {
    stats: {
      ip,
      dmarcPass: 0,
      dkimAligned: 0,
      spfAligned: 0,
      dkimPass: 0,
      spfPass: 0,
      forwarded: 0,
      quarantined: 0,
      rejected: 0,
      firstSeen: '2026-05-09',
      lastSeen: '2026-05-09',
      ptr: null,
      dkimDomains: [],
      spfDomains: [],
      ...fields,
    },
    classification: { service: null, confidence: 'low', evidence: [] },
    status: 'unknown',
    firstSeen: '2026-05-09',
    ...extra,
  }
}

/** The domain's own servers: plenty of passing mail, so shares are against a real volume. */
const own = source(
  '192.0.2.1',
  { messages: 5000, dmarcPass: 5000, dkimAligned: 5000, spfAligned: 5000 },
  {
    status: 'legitimate',
    firstSeen: '2025-01-01',
  },
)

const input = (fields: Partial<ReportAlertInput>): ReportAlertInput => ({
  domain: 'example.com',
  now: NOW,
  daily: [],
  sources: [own],
  policy: 'none',
  ...fields,
})

const days = (entries: [string, number, number][]): DailyVolume[] =>
  entries.map(([day, messages, dmarcPass]) => ({ day, messages, dmarcPass }))

describe('dmarc_failure_rate', () => {
  test('yesterday above 10% over at least 100 messages: medium, with both windows in evidence', () => {
    const [alert, ...rest] = failureRateAlerts(input({ daily: days([['2026-05-09', 200, 170]]) }))
    expect(rest).toEqual([])
    expect(alert).toMatchObject({ type: 'dmarc_failure_rate', subject: '', severity: 'medium' })
    expect(alert!.title).toBe('15.0% of 200 messages from example.com failed DMARC on 2026-05-09')
    expect(alert!.details.evidence.windows).toEqual([
      {
        days: 1,
        from: '2026-05-09',
        to: '2026-05-09',
        messages: 200,
        dmarcPass: 170,
        failed: 30,
        failureRate: 0.15,
      },
      {
        days: 7,
        from: '2026-05-03',
        to: '2026-05-09',
        messages: 200,
        dmarcPass: 170,
        failed: 30,
        failureRate: 0.15,
      },
    ])
  })

  test('a leak spread over the week fires on the 7-day window', () => {
    const week = days([
      ['2026-05-03', 40, 33],
      ['2026-05-04', 40, 33],
      ['2026-05-05', 40, 33],
      ['2026-05-09', 40, 33],
    ])
    const [alert] = failureRateAlerts(input({ daily: week }))
    expect(alert!.title).toBe(
      '17.5% of 160 messages from example.com failed DMARC over the 7 days to 2026-05-09',
    )
  })

  test('above 25% is high', () => {
    expect(failureRateAlerts(input({ daily: days([['2026-05-09', 100, 74]]) }))[0]!.severity).toBe('high')
  })

  test('near misses: exactly 10%, 99 messages, today (incomplete) and days before the window', () => {
    expect(failureRateAlerts(input({ daily: days([['2026-05-09', 100, 90]]) }))).toEqual([])
    expect(failureRateAlerts(input({ daily: days([['2026-05-09', 99, 50]]) }))).toEqual([])
    expect(failureRateAlerts(input({ daily: days([['2026-05-10', 1000, 0]]) }))).toEqual([])
    expect(failureRateAlerts(input({ daily: days([['2026-05-02', 1000, 0]]) }))).toEqual([])
  })
})

describe('new_unknown_source', () => {
  test('an unknown IP first seen yesterday with 101 messages fires, subject ip:<ip>', () => {
    const stranger = source('198.51.100.7', { messages: 101, ptr: 'mail.stranger.example' })
    const [alert, ...rest] = unknownSourceAlerts(input({ sources: [own, stranger] }))
    expect(rest).toEqual([])
    expect(alert).toMatchObject({
      type: 'new_unknown_source',
      subject: 'ip:198.51.100.7',
      severity: 'medium',
    })
    expect(alert!.title).toBe(
      "New unknown source 198.51.100.7 (mail.stranger.example) sent 101 messages as example.com (1.9% of the day's mail)",
    )
    expect(alert!.details.evidence).toMatchObject({
      messages: 101,
      firstSeen: '2026-05-09',
      service: null,
      ipsOmitted: 0,
    })
  })

  test('near miss: 100 messages at under 5% share', () => {
    expect(unknownSourceAlerts(input({ sources: [own, source('198.51.100.7', { messages: 100 })] }))).toEqual(
      [],
    )
  })

  test('a share above 5% fires below 100 messages, but not under the 10-message floor', () => {
    const small = source(
      '192.0.2.1',
      { messages: 100, dmarcPass: 100 },
      { status: 'legitimate', firstSeen: '2025-01-01' },
    )
    expect(
      unknownSourceAlerts(input({ sources: [small, source('198.51.100.7', { messages: 10 })] })),
    ).toHaveLength(1)
    expect(unknownSourceAlerts(input({ sources: [small, source('198.51.100.7', { messages: 9 })] }))).toEqual(
      [],
    )
    const tiny = source('192.0.2.1', { messages: 20, dmarcPass: 20 }, { status: 'legitimate' })
    expect(unknownSourceAlerts(input({ sources: [tiny, source('198.51.100.7', { messages: 9 })] }))).toEqual(
      [],
    )
  })

  test('IPs of one named service are grouped under service:<id>', () => {
    const sg = { classification: { service: SENDGRID, confidence: 'medium' as const, evidence: [] } }
    const alerts = unknownSourceAlerts(
      input({
        sources: [
          own,
          source('203.0.113.1', { messages: 60 }, sg),
          source('203.0.113.2', { messages: 60 }, sg),
        ],
      }),
    )
    expect(alerts.map((a) => a.subject)).toEqual(['service:sendgrid'])
    expect(alerts[0]!.title).toStartWith('New unknown source SendGrid sent 120 messages')
    expect(alerts[0]!.details.evidence.ips).toHaveLength(2)
  })

  test('first seen 7 days ago is still new; 8 days ago is not', () => {
    const at = (firstSeen: string) =>
      unknownSourceAlerts(input({ sources: [own, source('198.51.100.7', { messages: 500 }, { firstSeen })] }))
    expect(at('2026-05-03')).toHaveLength(1)
    expect(at('2026-05-02')).toEqual([])
  })

  test('legitimate, suspicious and forwarding sources are not unknown sources', () => {
    const sources = [
      own,
      source('198.51.100.1', { messages: 500 }, { status: 'legitimate' }),
      source('198.51.100.2', { messages: 500 }, { status: 'suspicious' }),
      source('198.51.100.3', { messages: 500, forwarded: 500 }),
    ]
    expect(unknownSourceAlerts(input({ sources }))).toEqual([])
  })
})

describe('spoofing_attempt', () => {
  const spoofer = (ip: string, messages: number, fields: Partial<ReportSource['stats']> = {}) =>
    source(ip, { messages, ...fields }, { status: 'suspicious' })

  test('50 unaligned messages from unrelated hosts: high under p=none, with the IPs', () => {
    const sources = [own, spoofer('198.51.100.1', 30), spoofer('198.51.100.2', 20, { spfPass: 20 })]
    const [alert, ...rest] = spoofingAlerts(input({ sources }))
    expect(rest).toEqual([])
    expect(alert).toMatchObject({ type: 'spoofing_attempt', subject: '', severity: 'high' })
    expect(alert!.title).toBe('Spoofing: 2 unknown hosts sent 50 messages as example.com failing DMARC')
    expect(alert!.details.evidence).toMatchObject({ messages: 50, unauthenticated: 30, policy: 'none' })
    expect(alert!.details.evidence.ips).toEqual([
      { ip: '198.51.100.1', ptr: null, messages: 30, dmarcPass: 0 },
      { ip: '198.51.100.2', ptr: null, messages: 20, dmarcPass: 0 },
    ])
  })

  test('severity follows the policy receivers apply', () => {
    const sources = [spoofer('198.51.100.1', 80)]
    expect(spoofingAlerts(input({ sources, policy: 'quarantine' }))[0]!.severity).toBe('medium')
    expect(spoofingAlerts(input({ sources, policy: 'reject' }))[0]!.severity).toBe('low')
    expect(spoofingAlerts(input({ sources, policy: 'missing' }))[0]!.severity).toBe('high')
  })

  test('near misses: 49 messages; a named service; any DMARC pass; forwarding', () => {
    expect(spoofingAlerts(input({ sources: [spoofer('198.51.100.1', 49)] }))).toEqual([])
    const named = source(
      '198.51.100.1',
      { messages: 80 },
      {
        status: 'suspicious',
        classification: { service: SENDGRID, confidence: 'high', evidence: [] },
      },
    )
    expect(spoofingAlerts(input({ sources: [named] }))).toEqual([])
    expect(spoofingAlerts(input({ sources: [spoofer('198.51.100.1', 80, { dmarcPass: 1 })] }))).toEqual([])
    expect(spoofingAlerts(input({ sources: [spoofer('198.51.100.1', 80, { forwarded: 80 })] }))).toEqual([])
  })
})

test('reportAlerts runs the three rules together', () => {
  const all = reportAlerts(
    input({
      daily: days([['2026-05-09', 5200, 5000]]),
      sources: [
        own,
        source('198.51.100.7', { messages: 150 }),
        source('198.51.100.9', { messages: 60 }, { status: 'suspicious' }),
      ],
    }),
  )
  expect(all.map((a) => a.type)).toEqual(['new_unknown_source', 'spoofing_attempt'])
})

describe('failure_report_received', () => {
  test('new reports: one alert, newest first', () => {
    const [alert] = failureReportAlerts({
      domain: 'example.com',
      newReports: [
        { id: 'r1', sourceIp: '198.51.100.1', reportedAt: new Date('2026-05-09T10:00:00Z') },
        { id: 'r2', sourceIp: null, reportedAt: new Date('2026-05-10T07:00:00Z') },
      ],
    })
    expect(alert).toMatchObject({ type: 'failure_report_received', subject: '', severity: 'medium' })
    expect(alert!.title).toBe('2 failure reports received for example.com')
    expect(alert!.details.evidence).toEqual({
      count: 2,
      latestAt: '2026-05-10T07:00:00.000Z',
      reports: [
        { id: 'r2', sourceIp: null, reportedAt: '2026-05-10T07:00:00.000Z' },
        { id: 'r1', sourceIp: '198.51.100.1', reportedAt: '2026-05-09T10:00:00.000Z' },
      ],
      reportsOmitted: 0,
    })
  })

  test('no new report, no alert', () => {
    expect(failureReportAlerts({ domain: 'example.com', newReports: [] })).toEqual([])
  })
})
