import { describe, expect, test } from 'bun:test'
import {
  alertNotice,
  slackMessage,
  summaryLine,
  teamsMessage,
  testNotice,
} from '../../../domain/notifications/chat-messages.ts'
import { slackProblems, teamsProblems } from '../../support/chat-receivers.ts'

// The Slack and Teams bodies (docs/notifications.md, "Chat messages"), held to the shapes the loopback
// receivers check, with hostile and oversized text.

const data = {
  alert_id: 42,
  domain: 'example.com',
  severity: 'high',
  title: 'SPF record has too many lookups',
}

describe('chat messages', () => {
  test('an alert notice links to the alert on the dashboard', () => {
    const notice = alertNotice('alert.created', data, 'https://dmarc.example.test')
    expect(notice).toEqual({
      event: 'alert.created',
      severity: 'high',
      domain: 'example.com',
      title: 'SPF record has too many lookups',
      link: 'https://dmarc.example.test/alerts/42',
    })
    expect(summaryLine(notice)).toBe('New alert: [HIGH] example.com SPF record has too many lookups')
    // An event queued before alerts had numbers carries the alert's UUID (docs/alerts.md).
    const legacy = alertNotice('alert.created', { ...data, alert_id: 'a1b2' }, 'https://dmarc.example.test')
    expect(legacy.link).toBe('https://dmarc.example.test/alerts/a1b2')
  })

  test('Slack: text plus header, section with fields, a link button and context', () => {
    const message = slackMessage(alertNotice('alert.resolved', data, 'https://d.example'))
    expect(slackProblems(message)).toEqual([])
    expect(message.text).toStartWith('Alert resolved: [HIGH] example.com')
    expect(message.blocks.map((b) => b.type)).toEqual(['header', 'section', 'actions', 'context'])
  })

  test('Teams: a message with one Adaptive Card 1.4 attachment', () => {
    const message = teamsMessage(alertNotice('alert.created', data, 'https://d.example'))
    expect(teamsProblems(message)).toEqual([])
    expect(message.attachments[0]!.contentType).toBe('application/vnd.microsoft.card.adaptive')
    expect(message.attachments[0]!.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' })
    expect(message.attachments[0]!.content.body[0]).toMatchObject({ text: 'New alert', color: 'Attention' })
  })

  test('Slack control characters are escaped; long titles are cut to the limits', () => {
    const hostile = { ...data, title: `<!channel> & <https://evil.example|click> ${'x'.repeat(5000)}` }
    const message = slackMessage(alertNotice('alert.created', hostile, 'https://d.example'))
    expect(slackProblems(message)).toEqual([])
    expect(JSON.stringify(message)).not.toContain('<!channel>')
    expect(message.text).toContain('&lt;!channel&gt; &amp;')
    expect(teamsProblems(teamsMessage(alertNotice('alert.created', hostile, 'https://d.example')))).toEqual(
      [],
    )
  })

  test('the test message has no severity or domain and links to the settings page', () => {
    const notice = testNotice('https://d.example')
    const slack = slackMessage(notice)
    expect(slackProblems(slack)).toEqual([])
    expect(slack.blocks[1]).not.toHaveProperty('fields')
    expect(teamsProblems(teamsMessage(notice))).toEqual([])
    expect(notice.link).toBe('https://d.example/settings/notifications')
  })
})
