import type { ProviderWrite } from '../../domain/dns-providers/writes.ts'
import type { SpfProposal } from '../../domain/spf-management/proposals.ts'
import { badge, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField } from './layout.ts'

// The SPF page's "Through your DNS provider" panel (issue #19, part 2): for a domain whose zone is
// on a connected DNS provider, the proposal waiting for approval (`assisted`) with its diff and
// approve/reject forms, the proposals decided before, and the SPF writes made through the
// provider (`automatic`, or approved). The figures are those of GET …/spf/proposals and
// GET /dns-providers/writes.

export interface SpfProviderView {
  proposals: SpfProposal[]
  /** Writes of the TXT set at the domain's apex, newest first. */
  writes: ProviderWrite[]
}

function diff(before: readonly string[], after: readonly string[]): SafeHtml {
  const removed = before.filter((v) => !after.includes(v))
  const added = after.filter((v) => !before.includes(v))
  return html`<ul class="diff">${removed.map((v) => html`<li><del>− <code class="value">${v}</code></del></li>`)}${added.map((v) => html`<li><ins>+ <code class="value">${v}</code></ins></li>`)}</ul>`
}

function waiting(domain: string, p: SpfProposal, csrf: string): SafeHtml {
  const base = `/domains/${domain}/spf/proposals/${p.id}`
  return html`<div class="proposal" id="proposal-${p.id}"><h3>Proposed change ${badge('warning', 'waiting for approval')}</h3>
<p>${p.reason} <span class="muted">(${time(p.createdAt)})</span></p>
<dl class="record"><dt>Now</dt><dd>${p.fromRecord === null ? html`<span class="muted">No SPF record</span>` : html`<code class="value">${p.fromRecord}</code>`}</dd>
<dt>Proposed</dt><dd><code class="value">${p.toRecord}</code></dd></dl>
${diff(p.before?.values ?? [], p.after.values)}
<div class="actions"><form method="post" action="${base}/approve" class="inline">${csrfField(csrf)}<button type="submit">Approve and write through the provider</button></form>
<form method="post" action="${base}/reject" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">Reject</button></form></div></div>`
}

export function providerSection(domain: string, view: SpfProviderView | null, csrf: string): SafeHtml {
  if (view === null) return html``
  const pending = view.proposals.find((p) => p.status === 'proposed')
  const decided = view.proposals.filter((p) => p.status !== 'proposed')
  return html`<section class="panel" aria-labelledby="provider"><h2 id="provider">Through your DNS provider</h2>
<p>A connected DNS provider holds the zone of ${domain}: at automation level “automatic” SPF changes are written there (read back, audited, undoable from the write log); at “assisted” they wait here for your approval; at “manual” you publish the record yourself.</p>
${pending ? waiting(domain, pending, csrf) : html`<p class="muted">No change is waiting for approval.</p>`}
${
  view.writes.length
    ? html`<h3>Written through the provider</h3><table><caption class="skip">SPF writes through the DNS provider, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Status</th><th scope="col">Change</th></tr></thead>
<tbody>${view.writes.map(
        (
          w,
        ) => html`<tr><td>${time(w.createdAt)}</td><td>${badge(w.status === 'verified' ? 'ok' : w.status === 'failed' ? 'error' : 'info', w.status.replaceAll('_', ' '))}${w.error ? html`<br><span class="muted">${w.error}</span>` : ''}</td>
<td>${diff(w.before?.values ?? [], w.after.values)}</td></tr>`,
      )}</tbody></table>`
    : ''
}
${
  decided.length
    ? html`<details><summary>Earlier proposals</summary><ul>${decided.map(
        (p) =>
          html`<li>${time(p.createdAt)}: <code>${p.toRecord}</code> ${badge(p.status === 'applied' ? 'ok' : 'unknown', p.status)}</li>`,
      )}</ul></details>`
    : ''
}
</section>`
}
