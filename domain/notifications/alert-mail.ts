import type { StoredAlert } from '../alerts/ports.ts'
import type { Fix } from '../posture/posture.ts'
import { escapeHtml, mailFooter, mailPage } from './mail-html.ts'
import type { PendingAlertMail, RenderedMail } from './mail-ports.ts'

// The alert email (issue #21, docs/notifications.md "Mail"): every alert change of a burst in one
// mail, each with its evidence, its remedy, the exact record to publish when the check knows it,
// and a link to the alert on the dashboard.

const fixOf = (alert: StoredAlert): Fix | null => {
  const fix = alert.details.fix as Fix | undefined
  return fix !== undefined && typeof fix.name === 'string' && typeof fix.value === 'string' ? fix : null
}

const remedyOf = (alert: StoredAlert): string =>
  typeof alert.details.remedy === 'string' ? alert.details.remedy : ''

const evidenceOf = (alert: StoredAlert): [string, string][] => {
  const evidence = alert.details.evidence
  if (evidence === null || typeof evidence !== 'object') return []
  return Object.entries(evidence as Record<string, unknown>).map(([key, value]) => [
    key,
    typeof value === 'string' ? value : JSON.stringify(value),
  ])
}

const EVIDENCE_VALUE_LIMIT = 500
const clip = (text: string) =>
  text.length > EVIDENCE_VALUE_LIMIT ? `${text.slice(0, EVIDENCE_VALUE_LIMIT)}…` : text

const headline = (item: PendingAlertMail) =>
  `${item.change === 'resolved' ? 'Resolved' : item.alert.severity.toUpperCase()}: ${item.alert.title}${item.alert.domain === null ? '' : ` (${item.alert.domain})`}`

export function alertMailSubject(items: readonly PendingAlertMail[]): string {
  if (items.length === 1) return `[dmarcwatch] ${headline(items[0]!)}`
  const opened = items.filter((i) => i.change === 'created').length
  const resolved = items.length - opened
  const parts = [opened > 0 ? `${opened} new` : '', resolved > 0 ? `${resolved} resolved` : ''].filter(
    Boolean,
  )
  return `[dmarcwatch] ${parts.join(', ')} alerts`
}

/** The burst's mail; `publicUrl` is where the dashboard is (PUBLIC_URL). */
export function renderAlertMail(items: readonly PendingAlertMail[], publicUrl: string): RenderedMail {
  const link = (alert: StoredAlert) => `${publicUrl}/alerts/${alert.number}`
  const texts: string[] = []
  const blocks: string[] = []
  for (const item of items) {
    const { alert } = item
    const fix = fixOf(alert)
    const evidence = evidenceOf(alert)
    texts.push(
      [
        headline(item),
        `Type: ${alert.type}${alert.subject === '' ? '' : ` (${alert.subject})`}`,
        ...(item.change === 'resolved' ? ['The condition cleared or the alert was resolved.'] : []),
        ...(remedyOf(alert) === '' ? [] : [`What to do: ${remedyOf(alert)}`]),
        ...(fix === null
          ? []
          : [`Publish: ${fix.name} TXT "${fix.value}"${fix.note ? ` (${fix.note})` : ''}`]),
        ...(evidence.length === 0 ? [] : ['Evidence:', ...evidence.map(([k, v]) => `  ${k}: ${clip(v)}`)]),
        `Details: ${link(alert)}`,
      ].join('\n'),
    )
    const colour =
      item.change === 'resolved'
        ? '#1a7f37'
        : alert.severity === 'critical' || alert.severity === 'high'
          ? '#cf222e'
          : '#9a6700'
    blocks.push(`<div style="margin:0 0 20px;padding:12px 16px;border-left:4px solid ${colour};background:#f6f8fa">
<p style="margin:0 0 6px;font-weight:bold">${escapeHtml(headline(item))}</p>
<p style="margin:0 0 6px;color:#656d76">${escapeHtml(alert.type)}${alert.subject === '' ? '' : ` · ${escapeHtml(alert.subject)}`}</p>
${remedyOf(alert) === '' ? '' : `<p style="margin:0 0 6px"><b>What to do:</b> ${escapeHtml(remedyOf(alert))}</p>`}
${
  fix === null
    ? ''
    : `<p style="margin:0 0 4px"><b>Publish this TXT record at</b> <code>${escapeHtml(fix.name)}</code>:</p>
<pre style="margin:0 0 6px;padding:8px;background:#ffffff;border:1px solid #d8dee4;white-space:pre-wrap;word-break:break-all">${escapeHtml(fix.value)}</pre>${fix.note ? `<p style="margin:0 0 6px;color:#656d76">${escapeHtml(fix.note)}</p>` : ''}`
}
${
  evidence.length === 0
    ? ''
    : `<table cellpadding="2" cellspacing="0" style="font-size:13px;margin:0 0 6px">${evidence
        .map(
          ([k, v]) =>
            `<tr><td style="color:#656d76;vertical-align:top;padding-right:8px">${escapeHtml(k)}</td><td>${escapeHtml(clip(v))}</td></tr>`,
        )
        .join('')}</table>`
}
<p style="margin:0"><a href="${escapeHtml(link(alert))}">Open the alert</a></p></div>`)
  }
  const subject = alertMailSubject(items)
  const settings = `${publicUrl}/settings/notifications`
  return {
    subject,
    text: `${texts.join('\n\n')}\n\n--\nNotification settings: ${settings}\n`,
    html: mailPage(subject, blocks.join('\n'), mailFooter(settings)),
  }
}
