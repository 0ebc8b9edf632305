import { isDemoDomain } from '../../domain/demo/demo-world.ts'
import { type Domain, type VerificationProof, verificationRecord } from '../../domain/domains/domain.ts'
import { badge, copyable, time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField } from './layout.ts'

// A domain's ownership on its page: how it was proven, or the two ways to prove it, and the report
// emails held until it is (docs/dashboard.md, docs/ingestion.md).

const PROOF_LABELS: Record<VerificationProof, string> = {
  dns_txt: 'by the verification TXT record',
  dmarc_rua: 'by your DMARC record, whose rua names your report address',
  dmarc_ruf: 'by your DMARC record, whose ruf names your report address',
  operator: 'by the operator of this service, without a DNS proof',
}

const reportEmails = (n: number) => (n === 1 ? '1 report email is' : `${n} report emails are`)

/**
 * Shown at the top of an unverified domain's page while reports wait: how many, why, and what to do.
 * Nothing when none wait (or the domain is verified: its waiting reports were queued again then).
 */
export function waitingNotice(domain: Domain, waiting: number): SafeHtml {
  if (domain.verifiedAt !== null || waiting === 0) return html``
  return html`<section class="error-summary" role="status" aria-labelledby="waiting-title">
<h2 id="waiting-title">${reportEmails(waiting)} waiting for verification</h2>
<p>Reports only count for domains whose ownership is proven, so the reports received for ${domain.name} are held, not lost. They are processed automatically as soon as the domain is verified: <a href="#ownership">verify it below</a>.</p>
</section>`
}

export function ownershipPanel(input: {
  domain: Domain
  reportAddress: string
  csrfToken: string
}): SafeHtml {
  const { domain, reportAddress } = input
  if (isDemoDomain(domain.name))
    return html`<p>${badge('info', 'demo')} This is the demo domain (docs/demo.md): its reports were generated and sent through the intake like real report mail, and its DNS records are answered by dmarcwatch itself. Remove it with <code>bun run cli demo --email … --remove</code>.</p>`
  if (domain.verifiedAt !== null) {
    const how = domain.verifiedBy === null ? '' : ` ${PROOF_LABELS[domain.verifiedBy]}`
    return html`<p>Ownership verified ${time(domain.verifiedAt)}${how}.</p>`
  }
  const record = verificationRecord(domain)
  return html`<p>Prove you own ${domain.name} in either of two ways, then verify. Reports are processed and DNS changes prepared only for verified domains.</p>
<h3>1. Send your DMARC reports here</h3>
<p>A DMARC record at <code>_dmarc.${domain.name}</code> whose <code>rua</code> (or <code>ruf</code>) names your report address proves it: only someone who controls the domain’s DNS can publish it. It is checked with every posture check, too.</p>
<dl class="record"><dt>Address for rua</dt><dd>${copyable('verify-rua', `mailto:${reportAddress}`)}</dd></dl>
<h3>2. Or publish this TXT record</h3>
<dl class="record"><dt>Type</dt><dd>TXT</dd>
<dt>Name</dt><dd>${copyable('verify-name', record.txtName)}</dd>
<dt>Value</dt><dd>${copyable('verify-value', record.txtValue)}</dd></dl>
<form method="post" action="/domains/${domain.name}/verify">${csrfField(input.csrfToken)}<button type="submit">Verify now</button></form>`
}
