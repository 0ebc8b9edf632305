import type { Digest } from './digest.ts'
import { escapeHtml, mailFooter, mailPage } from './mail-html.ts'
import type { RenderedMail } from './mail-ports.ts'

// The digest mail (docs/notifications.md "Mail"): the period's messages and DMARC pass rate with
// its change, the daily chart (an inline PNG; `chartSrc` is `cid:…` in the mail, a data: URL in the
// preview), the failing and new sources, open alerts, each domain's policy and progression, and
// the domains without reports. HTML and the same in plain text. The day-by-day figures are also a
// table under the chart, for mail clients that block images.

const number = (n: number) => n.toLocaleString('en-US')
const percent = (rate: number | null) => (rate === null ? 'no mail' : `${rate.toFixed(1)}%`)
const change = (points: number | null) =>
  points === null ? '' : ` (${points >= 0 ? '+' : '−'}${Math.abs(points).toFixed(1)} points)`
const h = escapeHtml

const periodText = (d: Digest) =>
  d.period.from === d.period.to ? d.period.from : `${d.period.from} to ${d.period.to}`

export const digestSubject = (d: Digest) =>
  `[dmarcwatch] ${d.frequency === 'daily' ? 'Daily' : 'Weekly'} digest: ${percent(d.passRate)} DMARC pass, ${number(d.messages)} messages`

const cell = 'style="padding:4px 8px;border-bottom:1px solid #eaeef2"'
function table(headers: string[], rows: string[][]): string {
  return `<table cellpadding="0" cellspacing="0" style="border-collapse:collapse;font-size:13px;margin:0 0 16px;width:100%">
<tr>${headers.map((x) => `<th align="left" ${cell}>${h(x)}</th>`).join('')}</tr>
${rows.map((r) => `<tr>${r.map((x) => `<td ${cell}>${x}</td>`).join('')}</tr>`).join('\n')}</table>`
}

function textList(title: string, lines: string[], empty: string): string {
  return `${title}\n${lines.length === 0 ? `  ${empty}` : lines.map((l) => `  - ${l}`).join('\n')}`
}

export function renderDigestMail(
  d: Digest,
  input: { publicUrl: string; chartSrc: string | null },
): RenderedMail {
  const { publicUrl } = input
  const subject = digestSubject(d)
  const settings = `${publicUrl}/settings/notifications`
  const policyText = (x: Digest['domains'][number]) =>
    `${x.policy ?? 'not checked yet'}${x.proposal === null ? '' : `, proposal waiting: ${x.proposal}`}`
  const text = [
    `Your dmarcwatch ${d.frequency} digest, ${periodText(d)}`,
    '',
    `Messages: ${number(d.messages)}`,
    `DMARC pass rate: ${percent(d.passRate)}${change(d.passRateChange)} (before: ${percent(d.previousPassRate)})`,
    '',
    textList(
      'Daily volume (pass / fail):',
      d.daily.map((x) => `${x.day}: ${number(x.pass)} / ${number(x.fail)}`),
      'no days',
    ),
    '',
    textList(
      'Failing sources:',
      d.failingSources.map((s) => `${s.ip}${s.ptr ? ` (${s.ptr})` : ''}: ${number(s.failing)} failing`),
      'none',
    ),
    '',
    textList(
      'New sources:',
      d.newSources.map(
        (s) => `${s.ip}${s.ptr ? ` (${s.ptr})` : ''} for ${s.domain}: ${number(s.messages)} messages`,
      ),
      'none',
    ),
    '',
    textList(
      `Open alerts (${d.openAlertCount}):`,
      d.openAlerts.map((a) => `${a.severity}: ${a.title}${a.domain ? ` (${a.domain})` : ''}`),
      'none',
    ),
    '',
    textList(
      'Domains:',
      d.domains.map(
        (x) =>
          `${x.name}: ${number(x.messages)} messages, ${percent(x.passRate)} pass; policy ${policyText(x)}`,
      ),
      'no domains',
    ),
    '',
    textList('Domains with no reports:', d.silentDomains, 'none'),
    '',
    `Dashboard: ${publicUrl}/reports`,
    `--\nNotification settings: ${settings}`,
    '',
  ].join('\n')

  const body = `<h1 style="font-size:20px;margin:0 0 4px">${d.frequency === 'daily' ? 'Daily' : 'Weekly'} digest</h1>
<p style="margin:0 0 16px;color:#656d76">${h(periodText(d))}</p>
<table role="presentation" cellpadding="0" cellspacing="0" style="margin:0 0 16px"><tr>
<td style="padding:0 24px 0 0"><div style="font-size:12px;color:#656d76">Messages</div><div style="font-size:24px;font-weight:bold">${number(d.messages)}</div></td>
<td><div style="font-size:12px;color:#656d76">DMARC pass rate</div><div style="font-size:24px;font-weight:bold">${percent(d.passRate)}</div>
<div style="font-size:12px;color:#656d76">${h(change(d.passRateChange).trim() || 'no change to compare')} against ${percent(d.previousPassRate)}</div></td>
</tr></table>
${
  input.chartSrc === null
    ? ''
    : `<p style="margin:0 0 4px"><img src="${h(input.chartSrc)}" width="560" height="160" alt="Daily messages: DMARC pass in green, fail in red" style="display:block;max-width:100%;height:auto;border:0"></p>
<p style="margin:0 0 16px;font-size:12px;color:#656d76">Daily messages: <span style="color:#1a7f37">■ pass</span> <span style="color:#cf222e">■ fail</span></p>`
}
${table(
  ['Day', 'Pass', 'Fail'],
  d.daily.map((x) => [h(x.day), number(x.pass), number(x.fail)]),
)}
<h2 style="font-size:16px">Failing sources</h2>
${
  d.failingSources.length === 0
    ? '<p>None.</p>'
    : table(
        ['Source', 'Failing'],
        d.failingSources.map((s) => [
          `${h(s.ip)}${s.ptr ? ` <span style="color:#656d76">${h(s.ptr)}</span>` : ''}`,
          number(s.failing),
        ]),
      )
}
<h2 style="font-size:16px">New sources</h2>
${
  d.newSources.length === 0
    ? '<p>None.</p>'
    : table(
        ['Source', 'Domain', 'Messages'],
        d.newSources.map((s) => [
          `${h(s.ip)}${s.ptr ? ` <span style="color:#656d76">${h(s.ptr)}</span>` : ''}`,
          h(s.domain),
          number(s.messages),
        ]),
      )
}
<h2 style="font-size:16px">Open alerts (${d.openAlertCount})</h2>
${
  d.openAlerts.length === 0
    ? '<p>None.</p>'
    : table(
        ['Severity', 'Alert'],
        d.openAlerts.map((a) => [
          h(a.severity),
          `<a href="${h(`${publicUrl}/alerts/${a.number}`)}">${h(a.title)}</a>${a.domain ? ` (${h(a.domain)})` : ''}`,
        ]),
      )
}
<h2 style="font-size:16px">Domains</h2>
${
  d.domains.length === 0
    ? '<p>No domains.</p>'
    : table(
        ['Domain', 'Messages', 'Pass', 'Policy'],
        d.domains.map((x) => [h(x.name), number(x.messages), percent(x.passRate), h(policyText(x))]),
      )
}
<h2 style="font-size:16px">Domains with no reports</h2>
<p>${d.silentDomains.length === 0 ? 'None.' : d.silentDomains.map(h).join(', ')}</p>
<p><a href="${h(`${publicUrl}/reports`)}">Open the dashboard</a></p>`
  return { subject, text, html: mailPage(subject, body, mailFooter(settings)) }
}
