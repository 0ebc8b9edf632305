import { describe, expect, test } from 'bun:test'
import { type AlertCandidate, mergeScopes } from '../../../domain/alerts/alert.ts'
import {
  type AlertScope,
  alertCreatedEvent,
  alertResolvedEvent,
  type OpenAlert,
  reconcile,
  resolveByUser,
} from '../../../domain/alerts/lifecycle.ts'
import { changeScope } from '../../../domain/alerts/rules/changes.ts'
import { REPORT_ALERT_TYPES, reportScope } from '../../../domain/alerts/rules/reports.ts'

const NOW = new Date('2026-05-10T08:00:00Z')

const candidate = (fields: Partial<AlertCandidate> = {}): AlertCandidate => ({
  type: 'spf_missing',
  subject: '',
  severity: 'high',
  title: 'No SPF record for example.com',
  details: { evidence: { name: 'example.com' }, remedy: 'Publish one SPF record.' },
  ...fields,
})

const openAlert = (alertId: string, fields: Partial<OpenAlert> = {}): OpenAlert => {
  const { type, subject, severity, title, details } = candidate()
  return { alertId, domain: 'example.com', type, subject, severity, title, details, ...fields }
}

const postureRun: AlertScope = {
  domain: 'example.com',
  rulesEvaluated: ['dmarc_missing', 'spf_missing', 'spf_permerror', 'dkim_weak_key'],
}

describe('reconcile', () => {
  test('a new condition creates an alert', () => {
    expect(reconcile([], [candidate()], postureRun, NOW)).toEqual({
      create: [candidate()],
      update: [],
      resolve: [],
    })
  })

  test('a persisting, unchanged condition does nothing (no churn), whatever the key order of stored details', () => {
    const stored = openAlert('a1', {
      details: { remedy: 'Publish one SPF record.', evidence: { name: 'example.com' } },
    })
    expect(reconcile([stored], [candidate()], postureRun, NOW)).toEqual({
      create: [],
      update: [],
      resolve: [],
    })
  })

  test('a changed severity, title or details updates the open alert instead of duplicating it', () => {
    const changed = [
      candidate({ severity: 'critical' }),
      candidate({ title: 'No SPF record for example.com (still)' }),
      candidate({
        details: { evidence: { name: 'example.com', checks: 2 }, remedy: 'Publish one SPF record.' },
      }),
    ]
    for (const next of changed) {
      expect(reconcile([openAlert('a1')], [next], postureRun, NOW)).toEqual({
        create: [],
        update: [{ alertId: 'a1', candidate: next }],
        resolve: [],
      })
    }
  })

  test('a cleared condition resolves the alert, recorded as condition_cleared at now', () => {
    expect(reconcile([openAlert('a1')], [], postureRun, NOW)).toEqual({
      create: [],
      update: [],
      resolve: [{ alertId: 'a1', reason: 'condition_cleared', resolvedAt: NOW }],
    })
  })

  test('subjects are separate alerts: one per (domain, type, subject)', () => {
    const s1 = candidate({ type: 'dkim_weak_key', subject: 's1', severity: 'critical' })
    const s2 = candidate({ type: 'dkim_weak_key', subject: 's2' })
    const open = [
      openAlert('a1', { type: 'dkim_weak_key', subject: 's1' }),
      openAlert('a3', { type: 'dkim_weak_key', subject: 's3' }),
    ]
    const plan = reconcile(open, [s1, s2], postureRun, NOW)
    expect(plan.create).toEqual([s2])
    expect(plan.update).toEqual([{ alertId: 'a1', candidate: s1 }])
    expect(plan.resolve.map((r) => r.alertId)).toEqual(['a3'])
  })

  test('a posture run does not resolve report-based alerts', () => {
    const open = [
      openAlert('r1', { type: 'dmarc_failure_rate' }),
      openAlert('r2', { type: 'spoofing_attempt' }),
    ]
    expect(reconcile(open, [], postureRun, NOW).resolve).toEqual([])
    const reportRun = { domain: 'example.com', ...reportScope() }
    expect(reconcile(open, [], reportRun, NOW).resolve.map((r) => r.alertId)).toEqual(['r1', 'r2'])
  })

  test('a subject filter limits what resolves: a removal clears only once the record is back', () => {
    const open = [
      openAlert('x1', { type: 'dns_record_removed', subject: 'spf' }),
      openAlert('x2', { type: 'dns_record_removed', subject: 'dmarc' }),
    ]
    const current = {
      checkedAt: NOW.toISOString(),
      records: {
        spf: { kind: 'spf' as const, name: 'example.com', value: 'v=spf1 -all' },
        dmarc: { kind: 'dmarc' as const, name: '_dmarc.example.com', value: null },
      },
    }
    const scope = {
      domain: 'example.com',
      ...changeScope({ domain: 'example.com', previous: null, current }),
    }
    expect(reconcile(open, [], scope, NOW).resolve.map((r) => r.alertId)).toEqual(['x1'])
  })

  test('event alerts (changes, weakenings, failure reports) never resolve themselves', () => {
    const open = [
      openAlert('e1', { type: 'dns_record_changed', subject: 'spf' }),
      openAlert('e2', { type: 'dmarc_weakened' }),
      openAlert('e3', { type: 'failure_report_received' }),
    ]
    const everything: AlertScope = {
      domain: 'example.com',
      rulesEvaluated: ['dns_record_changed', 'dmarc_weakened', 'failure_report_received'],
    }
    expect(reconcile(open, [], everything, NOW)).toEqual({ create: [], update: [], resolve: [] })
  })

  test('open alerts of other domains are left alone', () => {
    const other = openAlert('o1', { domain: 'example.org' })
    expect(reconcile([other], [candidate()], postureRun, NOW)).toEqual({
      create: [candidate()],
      update: [],
      resolve: [],
    })
  })

  test('account-wide alerts reconcile under domain null', () => {
    const scope: AlertScope = { domain: null, rulesEvaluated: ['webhook_delivery_failing'] }
    const open = [
      openAlert('w1', { domain: null, type: 'webhook_delivery_failing' }),
      openAlert('d1', { type: 'webhook_delivery_failing' }),
    ]
    expect(reconcile(open, [], scope, NOW).resolve.map((r) => r.alertId)).toEqual(['w1'])
  })

  test('an alert the user resolved is not in the open list: the same condition opens a new alert', () => {
    // The user resolved a1 yesterday; the record is still missing today.
    expect(reconcile([], [candidate()], postureRun, NOW).create).toEqual([candidate()])
  })

  test('two candidates for one key are a rule bug', () => {
    expect(() => reconcile([], [candidate(), candidate()], postureRun, NOW)).toThrow(
      'two candidates for spf_missing',
    )
  })
})

describe('scopes', () => {
  test('mergeScopes joins families and refuses a type claimed twice', () => {
    const merged = mergeScopes(reportScope(), { rulesEvaluated: ['no_reports'] })
    expect(merged.rulesEvaluated).toEqual([...REPORT_ALERT_TYPES, 'no_reports'])
    expect(() => mergeScopes(reportScope(), reportScope())).toThrow(
      'dmarc_failure_rate is evaluated by two rule families',
    )
  })
})

describe('events', () => {
  test('alert.created carries exactly alert_id, domain, severity and title', () => {
    const event = alertCreatedEvent({
      number: 41,
      domain: 'example.com',
      severity: 'high',
      title: 'No SPF record for example.com',
      createdAt: NOW,
    })
    expect(event).toEqual({
      type: 'alert.created',
      data: {
        alert_id: 41,
        domain: 'example.com',
        severity: 'high',
        title: 'No SPF record for example.com',
      },
      occurredAt: NOW,
    })
    expect(Object.keys(event.data)).toEqual(['alert_id', 'domain', 'severity', 'title'])
  })

  test('alert.resolved adds resolved_at and the reason', () => {
    const event = alertResolvedEvent({
      number: 41,
      domain: null,
      severity: 'high',
      title: 'Webhook deliveries are failing: 1 event not delivered',
      resolvedAt: NOW,
      reason: 'condition_cleared',
    })
    expect(event).toEqual({
      type: 'alert.resolved',
      data: {
        alert_id: 41,
        domain: null,
        severity: 'high',
        title: 'Webhook deliveries are failing: 1 event not delivered',
        resolved_at: '2026-05-10T08:00:00.000Z',
        reason: 'condition_cleared',
      },
      occurredAt: NOW,
    })
  })

  test('a user resolving an open alert records reason user; an already resolved one changes nothing', () => {
    expect(resolveByUser({ status: 'open' }, NOW)).toEqual({ reason: 'user', resolvedAt: NOW })
    expect(resolveByUser({ status: 'resolved' }, NOW)).toBeNull()
  })
})
