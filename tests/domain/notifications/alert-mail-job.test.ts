import { describe, expect, test } from 'bun:test'
import type { StoredAlert } from '../../../domain/alerts/ports.ts'
import { mailAlertBurst } from '../../../domain/notifications/alert-mail-job.ts'
import type {
  AlertMailQueue,
  NotificationMail,
  PendingAlertMail,
} from '../../../domain/notifications/mail-ports.ts'

// The alert email switch (docs/notifications.md "Alert emails"): off, the burst's changes are taken
// (so they are marked and not mailed later) and no mail is composed; on, they are mailed.

const pending: PendingAlertMail[] = [
  {
    queueId: 1,
    change: 'created',
    alert: {
      alertId: '00000000-0000-4000-8000-000000000001',
      number: 1,
      domain: null,
      type: 'dmarc_missing',
      subject: '',
      severity: 'critical',
      title: 'No DMARC record',
      details: {},
    } as unknown as StoredAlert,
  },
]

function run(enabled: boolean) {
  const composed: NotificationMail[][] = []
  let membersAsked = 0
  const queue: AlertMailQueue = {
    async takePending(_accountId, _now, compose) {
      const mails = compose(pending)
      composed.push(mails)
      return { changes: pending.length, mails: mails.length }
    },
  }
  const result = mailAlertBurst(
    {
      queue,
      settings: { get: async () => ({ alertEmail: { enabled, minSeverity: 'low', recipients: [] } }) },
      members: {
        emails: async () => {
          membersAsked++
          return ['owner@example.com']
        },
      },
      publicUrl: 'https://dmarcwatch.test',
      now: () => new Date('2026-01-01T00:00:00Z'),
    },
    'account',
  )
  return { result, composed, members: () => membersAsked }
}

describe('mailAlertBurst', () => {
  test('alert emails off: the changes are taken, no mail composed, no recipient looked up', async () => {
    const off = run(false)
    expect(await off.result).toEqual({ changes: 1, mails: 0 })
    expect(off.composed).toEqual([[]])
    expect(off.members()).toBe(0)
  })

  test('alert emails on: one mail per recipient', async () => {
    const on = run(true)
    expect(await on.result).toEqual({ changes: 1, mails: 1 })
    expect(on.composed[0]![0]).toMatchObject({ to: 'owner@example.com', kind: 'alerts' })
  })
})
