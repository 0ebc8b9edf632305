import type { StoredTlsReport } from '../../domain/reports/failure-tls-reads.ts'
import type { TlsRptFailureDetail, TlsRptPolicyResult } from '../../domain/reports/tls-rpt.ts'
import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import type { Viewer } from './layout.ts'
import { fmt, pct, reportLayout } from './report-frame-views.ts'

// /reports/tls/{id}: one SMTP TLS report (RFC 8460 §4) as it was stored: who sent it and for when,
// then each policy the sender applied (§4.3) with its session counts, and the failure details
// (§4.3.2): what went wrong, between which sending MTA and which receiving MX, how many times.

const none = html`<span class="muted">–</span>`
const codeOrNone = (value: string | null | undefined) => (value ? html`<code>${value}</code>` : none)

function rate(success: number, failure: number): string {
  const sessions = success + failure
  return pct(sessions === 0 ? null : Math.round((success / sessions) * 1000) / 10)
}

const POLICY_TYPES: Record<string, string> = {
  sts: 'MTA-STS',
  tlsa: 'DANE (TLSA)',
  'no-policy-found': 'No policy found',
}

function receiving(detail: TlsRptFailureDetail): SafeHtml {
  const parts = [
    detail.receivingMxHostname ? html`<code>${detail.receivingMxHostname}</code>` : null,
    detail.receivingMxHelo && detail.receivingMxHelo !== detail.receivingMxHostname
      ? html`<span class="muted">HELO</span> <code>${detail.receivingMxHelo}</code>`
      : null,
    detail.receivingIp ? html`<code>${detail.receivingIp}</code>` : null,
  ].filter((part) => part !== null)
  return parts.length === 0 ? none : html`${parts.map((part, i) => (i === 0 ? part : html`<br>${part}`))}`
}

function failureTable(policy: TlsRptPolicyResult, n: number): SafeHtml {
  const details = policy.failureDetails ?? []
  if (details.length === 0) return html`<p class="muted">No failure details reported for this policy.</p>`
  const rows = details.map(
    (d) => html`<tr><th scope="row"><code>${d.resultType}</code></th>
<td>${codeOrNone(d.sendingMtaIp)}</td>
<td>${receiving(d)}</td>
<td class="num">${fmt(Number(d.failedSessionCount ?? 0))}</td>
<td>${codeOrNone(d.failureReasonCode)}</td>
<td>${d.additionalInformation ?? none}</td></tr>`,
  )
  return html`<div class="table-scroll"><table aria-describedby="policy-${n}-failures">
<thead><tr><th scope="col">Result type</th><th scope="col">Sending MTA</th><th scope="col">Receiving MX</th><th scope="col" class="num">Failed sessions</th><th scope="col">Reason code</th><th scope="col">Additional information</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}

function policySection(policy: TlsRptPolicyResult, n: number): SafeHtml {
  const success = Number(policy.totalSuccessfulSessionCount ?? 0)
  const failure = Number(policy.totalFailureSessionCount ?? 0)
  const strings = policy.policyStrings ?? []
  const mx = policy.mxHosts ?? []
  return html`<section class="panel" aria-labelledby="policy-${n}"><h2 id="policy-${n}">Policy ${n}: ${POLICY_TYPES[policy.policyType] ?? policy.policyType} for ${policy.policyDomain}</h2>
<dl class="record">
<dt>Policy type</dt><dd><code>${policy.policyType}</code></dd>
<dt>Policy domain</dt><dd><code>${policy.policyDomain}</code></dd>
<dt>MX hosts</dt><dd>${mx.length === 0 ? none : html`<ul class="plain">${mx.map((m) => html`<li><code>${m}</code></li>`)}</ul>`}</dd>
<dt>Policy</dt><dd>${strings.length === 0 ? none : html`<pre class="headers">${strings.join('\n')}</pre>`}</dd>
<dt>Successful sessions</dt><dd>${fmt(success)}</dd>
<dt>Failed sessions</dt><dd>${fmt(failure)}</dd>
<dt>Success rate</dt><dd>${rate(success, failure)}</dd>
</dl>
<h3 id="policy-${n}-failures">Failure details</h3>
${failureTable(policy, n)}</section>`
}

export function tlsDetailView(input: { viewer: Viewer; row: StoredTlsReport }): SafeHtml {
  const { row } = input
  const report = row.report
  const policies = report.policies ?? []
  const back = `/reports/tls?${new URLSearchParams({ domain: row.domain }).toString()}`
  const body = html`<p><a href="${back}">← TLS reports of ${row.domain}</a></p>
<h1>TLS report from ${row.organization}</h1>
<section class="panel" aria-labelledby="tls-metadata"><h2 id="tls-metadata">Report</h2>
<dl class="record">
<dt>Domain</dt><dd><a href="/domains/${row.domain}">${row.domain}</a></dd>
<dt>Organization</dt><dd>${row.organization}</dd>
<dt>Contact</dt><dd>${report.contactInfo ?? none}</dd>
<dt>Report ID</dt><dd><code>${row.report_id}</code></dd>
<dt>Period</dt><dd>${time(row.begin_at)} – ${time(row.end_at)}</dd>
<dt>Received</dt><dd>${time(row.received_at)}</dd>
<dt>Successful sessions</dt><dd>${fmt(row.success_count)}</dd>
<dt>Failed sessions</dt><dd>${fmt(row.failure_count)}</dd>
<dt>Success rate</dt><dd>${rate(row.success_count, row.failure_count)}</dd>
<dt>Policies</dt><dd>${fmt(policies.length)}</dd>
</dl></section>
${policies.length === 0 ? html`<p class="panel">The report lists no policies.</p>` : policies.map((p, i) => policySection(p, i + 1))}`
  return reportLayout({
    title: `TLS report ${row.report_id} from ${row.organization}`,
    viewer: input.viewer,
    tab: '/reports/tls',
    body,
  })
}
