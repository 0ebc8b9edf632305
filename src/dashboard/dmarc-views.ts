import { cnameToPublish, describeLevel } from '../../domain/dmarc/hosting.ts'
import type { PolicyChange } from '../../domain/policy/ports.ts'
import type { ProgressionView } from '../../domain/policy/use-cases.ts'
import { formatCount } from '../../domain/sources/figures.ts'
import { badge, copyable, domainTabs, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, layout, type Viewer } from './layout.ts'

// /domains/{name}/dmarc: the DMARC policy and its progression (docs/policy-progression.md), the
// figures of GET /api/v1/domains/{name}/dmarc/progression: the record a change would replace, what
// the engine would do now and why, the waiting proposal with approve and reject, the rollback of
// the last change in force, and the history. Hosting the record is one button; the CNAME to publish
// is shown until DNS has it.

export interface DmarcPageInput {
  viewer: Viewer
  /** `user:<id>` of the viewer, to name their own changes "you". */
  actor: string
  view: ProgressionView
  /** The most recent change a rollback would undo; null when there is none. */
  undoable: PolicyChange | null
  notice?: string | null
  /** A refusal of the last action, in words. */
  problem?: string | null
}

const ACTIONS: Record<ProgressionView['decision']['action'], [string, string]> = {
  advance: ['ok', 'ready to advance'],
  propose: ['info', 'a step to propose'],
  hold: ['warning', 'holding'],
  rollback: ['error', 'rolling back'],
}

const AUTOMATION: Record<string, string> = {
  manual: 'Manual: monitored, never changed by dmarcwatch.',
  assisted: 'Assisted: each step is proposed here and waits for your approval.',
  automatic: 'Automatic: the daily run takes each step itself.',
}

const level = (l: { policy: string; pct: number | null }) => describeLevel(l as never)

function hostingSection(input: DmarcPageInput): SafeHtml {
  const { view, viewer } = input
  const name = view.domain.name
  if (view.hosted === null) {
    if (view.inForce?.home === 'provider')
      return html`<section class="panel" aria-labelledby="record"><h2 id="record">Record</h2>
<p>Your DNS provider holds the <code>_dmarc</code> record of ${name}; changes are written there.</p>
<p><code class="value">${view.inForce.record}</code></p></section>`
    return html`<section class="panel" aria-labelledby="record"><h2 id="record">Record</h2>
<p>dmarcwatch changes the policy through a DMARC record it serves for ${name}: publish one CNAME once, and every later step is made here, never in your DNS.</p>
${
  view.domain.verified
    ? html`<form method="post" action="/domains/${name}/dmarc/host">${csrfField(viewer.csrfToken)}<button type="submit">Host the DMARC record</button></form>
<p class="muted">It starts from the record you publish now (with this account's report address added), or <code>p=none</code> when there is none.</p>`
    : html`<p class="muted">Verify that you own ${name} first (on its <a href="/domains/${name}">overview</a>).</p>`
}</section>`
  }
  const cname = cnameToPublish(name, view.hosted.name)
  return html`<section class="panel" aria-labelledby="record"><h2 id="record">Record</h2>
<dl class="record"><dt>Served by dmarcwatch at</dt><dd><code>${view.hosted.name}</code></dd>
<dt>Record</dt><dd><code class="value">${view.hosted.record}</code></dd>
<dt>Your CNAME</dt><dd>${
    view.pointed === true
      ? badge('ok', 'in place')
      : view.pointed === false
        ? badge('error', 'not published')
        : badge('unknown', 'DNS could not tell')
  }</dd></dl>
${
  view.pointed === true
    ? ''
    : html`<p>Publish this record at your DNS host, in place of any <code>_dmarc</code> TXT record: until receivers find it, a change here does not reach them.</p>
<dl class="record"><dt>Type</dt><dd>CNAME</dd><dt>Name</dt><dd>${copyable('cname-name', cname.name)}</dd>
<dt>Target</dt><dd>${copyable('cname-target', cname.target)}</dd></dl>`
}</section>`
}

function decisionSection(input: DmarcPageInput): SafeHtml {
  const { view } = input
  const { decision, readiness } = view
  const [state, label] = ACTIONS[decision.action]
  return html`<section class="panel" aria-labelledby="decision"><h2 id="decision">What dmarcwatch would do now</h2>
<p>${badge(state, label)} ${decision.reason}</p>
${view.readFailure === null ? '' : html`<p class="muted">Your DNS provider could not be read just now, so the record it holds is not known: the daily run tries again (see Alerts).</p>`}
${decision.blockers.length > 0 ? html`<ul>${decision.blockers.map((b) => html`<li>${b}</li>`)}</ul>` : ''}
${decision.notBefore !== null ? html`<p class="muted">The next step may be taken from ${decision.notBefore}.</p>` : ''}
<dl class="record"><dt>Policy in force</dt><dd>${view.inForce === null ? `p=${view.policy}` : `p=${level(view.inForce)}`}</dd>
<dt>Automation</dt><dd>${AUTOMATION[view.domain.automationLevel] ?? view.domain.automationLevel}</dd>
<dt>Last ${formatCount(14)} days</dt><dd>${formatCount(readiness.messages)} messages on ${formatCount(readiness.days)} days${readiness.passRate === null ? '' : html`, ${(readiness.passRate * 100).toFixed(1)}% passed DMARC`}</dd></dl>
</section>`
}

function pendingSection(input: DmarcPageInput): SafeHtml {
  const { view, viewer } = input
  const pending = view.pending
  if (pending === null) return html``
  const name = view.domain.name
  return html`<section class="panel" aria-labelledby="proposal"><h2 id="proposal">Waiting for your approval</h2>
<p>${pending.kind === 'rollback' ? 'Roll back' : 'Advance'} from <strong>p=${level(pending.from)}</strong> to <strong>p=${level(pending.to)}</strong>, proposed ${time(pending.createdAt)}.</p>
<p>${pending.reason}</p>
<dl class="record"><dt>Record now</dt><dd><code class="value">${pending.fromRecord}</code></dd>
<dt>Record after</dt><dd><code class="value">${pending.toRecord}</code></dd></dl>
<div class="actions"><form method="post" action="/domains/${name}/dmarc/progression/approve" class="inline">${csrfField(viewer.csrfToken)}<button type="submit">Approve</button></form>
<form method="post" action="/domains/${name}/dmarc/progression/reject" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary">Reject</button></form></div>
<p class="muted">Approving checks the figures again first: a proposal they no longer support is withdrawn instead.</p>
</section>`
}

function historySection(input: DmarcPageInput): SafeHtml {
  const { view, viewer, undoable, actor } = input
  const name = view.domain.name
  return html`<section class="panel" aria-labelledby="history"><h2 id="history">Policy changes</h2>
${
  undoable === null
    ? ''
    : html`<form method="post" action="/domains/${name}/dmarc/progression/rollback" data-confirm="Return ${name} to p=${level(undoable.from)}?">${csrfField(viewer.csrfToken)}<button type="submit" class="secondary">Roll back to p=${level(undoable.from)}</button></form>`
}
${
  view.history.length === 0
    ? html`<p class="muted">No change yet.</p>`
    : html`<table><caption class="skip">Policy changes of ${name}, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Change</th><th scope="col">Status</th><th scope="col">By</th><th scope="col">Why</th></tr></thead>
<tbody>${view.history.map(
        (c) =>
          html`<tr><td>${time(c.appliedAt ?? c.createdAt)}</td><td>${c.kind}: p=${level(c.from)} → p=${level(c.to)}</td><td>${c.rolledBackAt !== null ? 'rolled back' : c.status}</td><td>${c.actor === 'system' ? 'dmarcwatch' : c.actor === actor ? 'you' : 'a member'}</td><td>${c.reason}</td></tr>`,
      )}</tbody></table>`
}
</section>`
}

export function dmarcPageView(input: DmarcPageInput): SafeHtml {
  const name = input.view.domain.name
  return layout({
    title: `DMARC policy · ${name}`,
    viewer: input.viewer,
    current: '/domains',
    body: html`<h1>${name}</h1>
${domainTabs(name, 'dmarc')}
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${input.problem ? html`<div class="error-summary" role="alert"><h2>There is a problem</h2><p>${input.problem}</p></div>` : ''}
${hostingSection(input)}
${pendingSection(input)}
${decisionSection(input)}
${historySection(input)}`,
  })
}
