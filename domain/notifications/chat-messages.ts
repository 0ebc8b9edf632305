import type { AlertSeverity } from '../alerts/alert.ts'
import { isSeverity } from './settings.ts'

// What a chat channel receives (docs/notifications.md, "Chat messages"): one message per alert created
// or resolved, or a test. Pure builders of the two documented shapes:
// - Slack incoming webhooks: `text` (the notification and fallback line) plus `blocks` (Block Kit:
//   header, section with fields, actions with a link button, context).
//   https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks
// - Microsoft Teams workflow webhooks ("Post to a channel when a webhook request is received"): a
//   `message` whose one attachment is an Adaptive Card 1.4.
//   https://learn.microsoft.com/en-us/microsoftteams/platform/task-modules-and-cards/cards/cards-reference#adaptive-card

export type ChatEvent = 'alert.created' | 'alert.resolved' | 'test'

export interface ChatNotice {
  event: ChatEvent
  severity: AlertSeverity | null
  domain: string | null
  title: string
  /** Where the alert is on the dashboard (PUBLIC_URL/alerts/<id>), or the settings page for a test. */
  link: string
}

/** Slack's documented limits: header text 150 characters, section and field text 3000 / 2000. */
const SLACK_HEADER_MAX = 150
const TEXT_MAX = 2000

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

const headline = (notice: ChatNotice) =>
  notice.event === 'alert.created'
    ? 'New alert'
    : notice.event === 'alert.resolved'
      ? 'Alert resolved'
      : 'Test message from dmarcwatch'

/** The notice of an outbox event's data (`{alert_id, domain, severity, title}`: docs/alerts.md). */
export function alertNotice(
  event: 'alert.created' | 'alert.resolved',
  data: Record<string, unknown>,
  dashboardUrl: string,
): ChatNotice {
  const severity = typeof data.severity === 'string' && isSeverity(data.severity) ? data.severity : null
  // An integer since alert numbers (docs/alerts.md); an event queued before them holds the uuid.
  const alertId =
    typeof data.alert_id === 'number' || typeof data.alert_id === 'string' ? String(data.alert_id) : ''
  return {
    event,
    severity,
    domain: typeof data.domain === 'string' ? data.domain : null,
    title: typeof data.title === 'string' ? data.title : 'Alert',
    link: `${dashboardUrl}/alerts/${encodeURIComponent(alertId)}`,
  }
}

/** The test message of POST /notifications/test. */
export function testNotice(dashboardUrl: string): ChatNotice {
  return {
    event: 'test',
    severity: null,
    domain: null,
    title: 'This channel will receive dmarcwatch alerts.',
    link: `${dashboardUrl}/settings/notifications`,
  }
}

/** The one-line summary: Slack's `text` (shown in notifications) and the card's fallback. */
export function summaryLine(notice: ChatNotice): string {
  const parts = [
    notice.severity === null ? null : `[${notice.severity.toUpperCase()}]`,
    notice.domain,
    notice.title,
  ].filter((p) => p !== null)
  return cut(`${headline(notice)}: ${parts.join(' ')}`, TEXT_MAX)
}

/** Slack mrkdwn treats &, < and > as control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function slackMessage(notice: ChatNotice): { text: string; blocks: Record<string, unknown>[] } {
  const fields = [
    ...(notice.severity === null ? [] : [{ type: 'mrkdwn', text: `*Severity*\n${notice.severity}` }]),
    ...(notice.domain === null ? [] : [{ type: 'mrkdwn', text: `*Domain*\n${slackEscape(notice.domain)}` }]),
  ]
  return {
    text: slackEscape(summaryLine(notice)),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(headline(notice), SLACK_HEADER_MAX) } },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `*${slackEscape(cut(notice.title, TEXT_MAX))}*` },
        ...(fields.length > 0 ? { fields } : {}),
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: notice.event === 'test' ? 'Open settings' : 'Open alert' },
            url: notice.link,
          },
        ],
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `dmarcwatch · ${notice.event}` }] },
    ],
  }
}

const CARD_COLOR: Record<AlertSeverity, string> = {
  critical: 'Attention',
  high: 'Attention',
  medium: 'Warning',
  low: 'Accent',
  info: 'Default',
}

export function teamsMessage(notice: ChatNotice) {
  const facts = [
    ...(notice.severity === null ? [] : [{ title: 'Severity', value: notice.severity }]),
    ...(notice.domain === null ? [] : [{ title: 'Domain', value: notice.domain }]),
  ]
  const color =
    notice.event === 'alert.resolved' ? 'Good' : notice.severity ? CARD_COLOR[notice.severity] : 'Default'
  return {
    type: 'message',
    // Shown where the card cannot be (notifications, older clients).
    summary: summaryLine(notice),
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: headline(notice),
              weight: 'Bolder',
              size: 'Medium',
              color,
              wrap: true,
            },
            { type: 'TextBlock', text: cut(notice.title, TEXT_MAX), wrap: true },
            ...(facts.length > 0 ? [{ type: 'FactSet', facts }] : []),
          ],
          actions: [
            {
              type: 'Action.OpenUrl',
              title: notice.event === 'test' ? 'Open settings' : 'Open alert',
              url: notice.link,
            },
          ],
        },
      },
    ],
  }
}
