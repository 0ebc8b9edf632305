import type { QuarantinedMessage } from '../../domain/ingest/quarantine.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, type Viewer } from './layout.ts'
import { fmt, pager, reportLayout } from './report-frame-views.ts'

// /reports/quarantine: report emails that could not be processed, with the reason, as
// GET /api/v1/ingest/quarantine lists them; nothing is dropped, and Retry puts one back in the queue.

/** What to do about the reasons a fix outside the message can cure. */
const REMEDIES: Record<string, SafeHtml> = {
  domain_not_verified: html`Processed by itself once the domain is verified; <a href="/domains">your domain’s page</a> shows how.`,
  domain_not_in_account: html`<a href="/domains">Add the domain</a> and verify it, then retry.`,
}

export function quarantineView(input: {
  viewer: Viewer
  messages: QuarantinedMessage[]
  total: number
  page: number
  lastPage: number
  notice: string | null
}): SafeHtml {
  const { viewer } = input
  const rows = input.messages.map(
    (m) => html`<tr><th scope="row">${time(m.receivedAt)}</th>
<td>${badge('warning', m.code)}<br>${m.reason}${REMEDIES[m.code] ? html`<br><span class="muted">${REMEDIES[m.code]}</span>` : ''}</td>
<td>${m.source}${m.recipient ? html`<br><code>${m.recipient}</code>` : ''}</td>
<td class="num">${fmt(m.size)} bytes</td>
<td><form method="post" action="/reports/quarantine/${m.id}/retry">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary" aria-label="Retry the message received ${m.receivedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC">Retry</button></form></td></tr>`,
  )
  const body = html`<h1>Quarantine</h1>
<p class="lead">Report emails that could not be processed. They are kept with the reason; after a fix (verifying a domain, say) retry them.</p>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
<h2>${fmt(input.total)} quarantined ${input.total === 1 ? 'message' : 'messages'}</h2>
${
  input.messages.length === 0
    ? html`<p class="panel">Nothing in quarantine.</p>`
    : html`<div class="table-scroll"><table>
<caption class="skip">Quarantined messages</caption>
<thead><tr><th scope="col">Received</th><th scope="col">Reason</th><th scope="col">Source</th><th scope="col" class="num">Size</th><th scope="col"><span class="skip">Action</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${pager('/reports/quarantine', new URLSearchParams(), input.page, input.lastPage)}`
  return reportLayout({ title: 'Quarantine', viewer, tab: '/reports/quarantine', body })
}
