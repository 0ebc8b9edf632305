import { describe, expect, test } from 'bun:test'
import {
  dnsReadAlerts,
  type NoReportsInput,
  noReportsAlerts,
  noReportsScope,
  quarantineAlerts,
  webhookAlerts,
} from '../../../domain/alerts/rules/operations.ts'

const NOW = new Date('2026-05-10T08:00:00Z')
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000)

describe('no_reports', () => {
  const input = (fields: Partial<NoReportsInput>): NoReportsInput => ({
    domain: 'example.com',
    now: NOW,
    lastReportAt: hoursAgo(80),
    ruaPointsHere: true,
    expectedSince: new Date('2026-01-01T00:00:00Z'),
    ...fields,
  })

  test('a domain that reported before and has been silent for 3 days', () => {
    const [alert, ...rest] = noReportsAlerts(input({ lastReportAt: hoursAgo(72) }))
    expect(rest).toEqual([])
    expect(alert).toMatchObject({ type: 'no_reports', subject: '', severity: 'medium' })
    expect(alert!.title).toBe('No DMARC reports received for example.com for 3 days')
    expect(alert!.details.evidence).toEqual({
      lastReportAt: '2026-05-07T08:00:00.000Z',
      expectedSince: '2026-01-01T00:00:00.000Z',
      silentDays: 3,
      ruaPointsHere: true,
    })
  })

  test('near miss: one minute short of 3 days', () => {
    expect(noReportsAlerts(input({ lastReportAt: new Date(hoursAgo(72).getTime() + 60_000) }))).toEqual([])
  })

  test('had reports, rua no longer points here: still fires, and says why', () => {
    const [alert] = noReportsAlerts(input({ ruaPointsHere: false }))
    expect(alert!.details.remedy).toContain('no longer sends aggregate reports here')
  })

  test('never reported: fires only when rua points here, counted from expectedSince', () => {
    const never = { lastReportAt: null, expectedSince: hoursAgo(96) }
    const [alert] = noReportsAlerts(input({ ...never, ruaPointsHere: true }))
    expect(alert!.title).toBe(
      'No DMARC reports received for example.com in the 4 days since reports were expected',
    )
    expect(noReportsAlerts(input({ ...never, ruaPointsHere: false }))).toEqual([])
    expect(noReportsAlerts(input({ ...never, ruaPointsHere: null }))).toEqual([])
    expect(noReportsAlerts(input({ lastReportAt: null, expectedSince: hoursAgo(71) }))).toEqual([])
  })

  test('scope: not evaluated when neither a past report nor the rua can tell', () => {
    expect(noReportsScope(input({ lastReportAt: null, ruaPointsHere: null })).rulesEvaluated).toEqual([])
    expect(noReportsScope(input({ ruaPointsHere: null })).rulesEvaluated).toEqual(['no_reports'])
  })
})

describe('webhook_delivery_failing', () => {
  test('one failed delivery is an alert (high) with the last error', () => {
    const [alert] = webhookAlerts({
      failingDeliveries: 1,
      lastFailureAt: new Date('2026-05-10T07:00:00Z'),
      lastError: 'HTTP 500',
    })
    expect(alert).toEqual({
      type: 'webhook_delivery_failing',
      subject: '',
      severity: 'high',
      title: 'Webhook deliveries are failing: 1 event not delivered',
      details: {
        evidence: { failingDeliveries: 1, lastFailureAt: '2026-05-10T07:00:00.000Z', lastError: 'HTTP 500' },
        remedy: expect.stringContaining('/webhooks/deliveries/{id}/redeliver'),
      },
    })
  })

  test('no failing delivery, no alert', () => {
    expect(webhookAlerts({ failingDeliveries: 0, lastFailureAt: null, lastError: null })).toEqual([])
  })
})

describe('ingest_quarantine_growing', () => {
  test('+10 in a day fires; +9 does not', () => {
    const [alert] = quarantineAlerts({ quarantined: { now: 14, dayAgo: 4 } })
    expect(alert).toMatchObject({ type: 'ingest_quarantine_growing', subject: '', severity: 'medium' })
    expect(alert!.title).toBe('10 report messages quarantined in the last day (14 in all)')
    expect(alert!.details.evidence).toEqual({ now: 14, dayAgo: 4, growth: 10, threshold: 10 })
    expect(quarantineAlerts({ quarantined: { now: 13, dayAgo: 4 } })).toEqual([])
  })

  test('a large but stable quarantine is not growing', () => {
    expect(quarantineAlerts({ quarantined: { now: 500, dayAgo: 500 } })).toEqual([])
  })
})

describe('dns_provider_read_failing', () => {
  test('one alert per connection whose last read failed, with the remedy', () => {
    const at = new Date('2026-05-10T07:30:00Z')
    const [alert, ...rest] = dnsReadAlerts([
      { connectionId: 'c1', provider: 'powerdns', name: 'Lab PowerDNS', error: 'unavailable: HTTP 503', at },
    ])
    expect(rest).toEqual([])
    expect(alert).toEqual({
      type: 'dns_provider_read_failing',
      subject: 'c1',
      severity: 'high',
      title: 'The DNS provider connection "Lab PowerDNS" cannot be read',
      details: {
        evidence: {
          connectionId: 'c1',
          provider: 'powerdns',
          name: 'Lab PowerDNS',
          error: 'unavailable: HTTP 503',
          failedAt: '2026-05-10T07:30:00.000Z',
        },
        remedy: expect.stringContaining('POST /dns-providers/authenticate'),
      },
    })
  })

  test('no failing read, no alert', () => {
    expect(dnsReadAlerts([])).toEqual([])
  })
})
