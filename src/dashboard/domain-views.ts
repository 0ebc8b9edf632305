import { isDemoDomain } from '../../domain/demo/demo-world.ts'
import { AUTOMATION_LEVELS, type Domain } from '../../domain/domains/domain.ts'
import type { Organization } from '../../domain/organizations/organization.ts'
import type { presentStatus } from '../routes/posture.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, layout, type Viewer } from './layout.ts'

// The domain list (filtered by organization) and a domain's posture page, with the sub-navigation
// the domain's pages share.

type Status = ReturnType<typeof presentStatus>

const AUTOMATION_LABELS: Record<string, string> = {
  manual: 'Manual: monitor and alert only',
  assisted: 'Assisted: prepare changes, wait for my approval',
  automatic: 'Automatic: apply safe changes',
}

export function time(date: Date | string | null): SafeHtml {
  if (date === null) return html`<span class="muted">never</span>`
  const iso = typeof date === 'string' ? date : date.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
}

export function badge(state: string, label = state): SafeHtml {
  return html`<span class="badge ${state}">${label}</span>`
}

function grade(value: string | null, big = false): SafeHtml {
  return value === null
    ? html`<span class="grade none${big ? ' big' : ''}" aria-label="Not checked yet">–</span>`
    : html`<span class="grade ${value}${big ? ' big' : ''}" aria-label="Grade ${value}">${value}</span>`
}

const TABS = [
  { key: 'overview', label: 'Overview', path: '' },
  { key: 'sources', label: 'Sources', path: '/sources' },
  { key: 'spf', label: 'SPF', path: '/spf' },
  { key: 'dmarc', label: 'DMARC policy', path: '/dmarc' },
] as const

export type DomainTab = (typeof TABS)[number]['key']

/** The domain's pages: its posture and reports, its sources, its SPF record, its DMARC policy. */
export function domainTabs(domain: string, current: DomainTab): SafeHtml {
  return html`<nav class="actions tabs" aria-label="Pages of ${domain}">${TABS.map(
    (tab) =>
      html`<a href="/domains/${domain}${tab.path}"${tab.key === current ? html` aria-current="page"` : ''}>${tab.label}</a>`,
  )}</nav>`
}

/** A value to publish, with a copy button (script) beside the always-selectable text. */
export function copyable(id: string, value: string): SafeHtml {
  return html`<div class="copy-row"><code class="value" id="${id}">${value}</code><button type="button" class="secondary" data-copy="${id}" aria-label="Copy">Copy</button></div>`
}

export function addDomainForm(csrf: string, input: { value?: string; errors?: FieldErrors } = {}): SafeHtml {
  const errors = input.errors ?? {}
  const problems = errors.domain_name ?? []
  return html`<form method="post" action="/domains" class="inline panel" novalidate>
${csrfField(csrf)}
<div><label for="domain_name">Domain</label>
<input id="domain_name" name="domain_name" type="text" value="${input.value ?? ''}" placeholder="example.com" autocomplete="off" spellcheck="false" required${problems.length ? html` aria-invalid="true" aria-describedby="domain_name-error"` : ''}>
${problems.length ? html`<p class="field-error" id="domain_name-error">${problems.join(' ')}</p>` : ''}</div>
<div><label for="automation_level">Automation</label>
<select id="automation_level" name="automation_level">${AUTOMATION_LEVELS.map(
    (level) => html`<option value="${level}">${AUTOMATION_LABELS[level]}</option>`,
  )}</select></div>
<div><button type="submit">Add domain</button></div>
</form>`
}

function organizationFilter(organizations: readonly Organization[], selected: number | null): SafeHtml {
  if (organizations.length === 0) return html``
  return html`<form method="get" action="/domains" class="inline panel">
<div><label for="organization">Organization</label>
<select id="organization" name="organization"><option value="">All organizations</option>${organizations.map(
    (o) => html`<option value="${o.id}"${o.id === selected ? html` selected` : ''}>${o.name}</option>`,
  )}</select></div>
<div><button type="submit" class="secondary">Filter</button></div>
</form>`
}

export function domainListView(input: {
  viewer: Viewer
  domains: Domain[]
  total: number
  page: number
  lastPage: number
  organizations: readonly Organization[]
  /** The organization the list is filtered by; null for all. */
  organization: number | null
  form?: { value?: string; errors?: FieldErrors }
  notice?: string | null
}): SafeHtml {
  const names = new Map(input.organizations.map((o) => [o.id, o.name]))
  const selected = input.organization === null ? null : (names.get(input.organization) ?? null)
  const query = input.organization === null ? '' : `&organization=${input.organization}`
  const rows = input.domains.map(
    (d) => html`<tr>
<th scope="row"><a href="/domains/${d.name}">${d.name}</a>${isDemoDomain(d.name) ? html` ${badge('info', 'demo')}` : ''}</th>
<td>${d.organizationId === null ? html`<span class="muted">–</span>` : (names.get(d.organizationId) ?? '')}</td>
<td>${d.dmarcPolicy === null ? badge('unknown', 'unchecked') : badge(d.dmarcPolicy === 'missing' ? 'missing' : d.dmarcPolicy === 'none' ? 'warning' : 'ok', d.dmarcPolicy === 'missing' ? 'no policy' : `p=${d.dmarcPolicy}`)}</td>
<td>${grade(d.status.grade)}</td>
<td>${badge(d.status.dmarc)}</td><td>${badge(d.status.spf)}</td><td>${badge(d.status.dkim)}</td>
<td>${d.verifiedAt ? 'Verified' : html`<span class="muted">Not verified</span>`}</td>
<td>${time(d.status.checkedAt)}</td>
</tr>`,
  )
  const table =
    input.domains.length === 0
      ? selected === null
        ? html`<p class="panel">No domains yet. Add your first one above: dmarcwatch checks its DMARC, SPF and DKIM records and tells you what to publish.</p>`
        : html`<p class="panel">No domains in ${selected}. <a href="/domains">Show all domains</a>.</p>`
      : html`<table>
<caption class="skip">Your domains${selected === null ? '' : ` in ${selected}`}</caption>
<thead><tr><th scope="col">Domain</th><th scope="col">Organization</th><th scope="col">Policy</th><th scope="col">Grade</th><th scope="col">DMARC</th><th scope="col">SPF</th><th scope="col">DKIM</th><th scope="col">Ownership</th><th scope="col">Last checked</th></tr></thead>
<tbody>${rows}</tbody></table>`
  const pager =
    input.lastPage > 1
      ? html`<nav aria-label="Pages" class="actions">${input.page > 1 ? html`<a href="/domains?page=${input.page - 1}${query}">Previous</a>` : ''}<span>Page ${input.page} of ${input.lastPage}</span>${input.page < input.lastPage ? html`<a href="/domains?page=${input.page + 1}${query}">Next</a>` : ''}</nav>`
      : ''
  const body = html`<h1>Domains</h1>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${errorSummary(input.form?.errors ?? {}, { domain_name: 'Domain' })}
${addDomainForm(input.viewer.csrfToken, input.form)}
<p class="actions"><a class="button" href="/dns-providers">Import from DNS provider</a><span class="muted">Connect a DNS provider to add all the domains of its zones at once.</span></p>
${organizationFilter(input.organizations, input.organization)}
<h2>${input.total} ${input.total === 1 ? 'domain' : 'domains'}</h2>
${selected === null ? '' : html`<p class="muted">In the organization ${selected}. <a href="/domains">Show all domains</a>.</p>`}
${table}
${pager}`
  return layout({ title: 'Domains', viewer: input.viewer, current: '/domains', body })
}

function areaPanel(title: string, area: Status['dmarc']): SafeHtml {
  return html`<section class="panel" aria-labelledby="area-${title}">
<h3 id="area-${title}">${title} ${badge(area.status)}</h3>
<p>${area.summary}</p>
${area.record ? html`<code class="value">${area.record}</code>` : ''}
</section>`
}

export function domainStatusView(input: {
  viewer: Viewer
  domain: Domain
  status: Status
  notice?: string | null
  verification?: { verified: boolean; message: string; found: string[] } | null
  /** The chart and the top sources (domain-detail-views.ts). */
  reports?: SafeHtml
  /** How ownership is proven or can be (domain-ownership-views.ts). */
  ownership: SafeHtml
  /** The reports waiting for verification, if any (domain-ownership-views.ts). */
  waiting?: SafeHtml
}): SafeHtml {
  const { viewer, domain, status } = input
  const csrf = csrfField(viewer.csrfToken)
  const issues = status.issues.map(
    (issue, i) => html`<li class="issue ${issue.severity}">
<p>${badge(issue.severity)} <strong>${issue.message}</strong> <span class="muted">(${issue.code})</span></p>
${
  issue.fix
    ? html`<p>Publish this DNS record:</p>${issue.fix.note ? html`<p class="hint">${issue.fix.note}</p>` : ''}
<dl class="record"><dt>Type</dt><dd>${issue.fix.type}</dd>
<dt>Name</dt><dd>${copyable(`fix-${i}-name`, issue.fix.name)}</dd>
<dt>Value</dt><dd>${copyable(`fix-${i}-value`, issue.fix.value)}</dd></dl>`
    : ''
}
</li>`,
  )
  const verification = input.verification
  const body = html`<p><a href="/domains">← Domains</a></p>
<h1>${domain.name}</h1>
${domainTabs(domain.name, 'overview')}
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${input.waiting ?? ''}
${verification ? html`<div class="${verification.verified ? 'notice' : 'error-summary'}" role="status">${verification.message}${verification.found.length ? html` Found: ${verification.found.map((v, i) => html`${i ? ', ' : ''}<code>${v}</code>`)}` : ''}</div>` : ''}
<section class="panel summary" aria-label="Summary">
${grade(status.grade, true)}
<div><p><strong>Score ${status.score}/100</strong> · DMARC policy ${status.dmarc_policy === 'missing' ? 'missing' : html`<code>p=${status.dmarc_policy}</code>`}</p>
<p class="muted">Checked ${time(status.checked_at)}; refreshed after ${time(status.fresh_until)}.</p></div>
<form method="post" action="/domains/${domain.name}/check">${csrf}<button type="submit" class="secondary">Check now</button></form>
</section>
<h2>What to change</h2>
${issues.length ? html`<ol class="issues">${issues}</ol>` : html`<p class="panel">Nothing to change: every check passed.</p>`}
<h2>Records</h2>
<div class="areas">${areaPanel('DMARC', status.dmarc)}${areaPanel('SPF', status.spf)}${areaPanel('DKIM', status.dkim)}${areaPanel('Mail', status.mail)}</div>
<p><a href="/domains/${domain.name}/spf">SPF record: include tree, lookups and SPF management</a></p>
${input.reports ?? ''}
<h2 id="ownership">Ownership</h2>
<section class="panel">${input.ownership}</section>
<h2>Automation</h2>
<section class="panel"><p><strong>${AUTOMATION_LABELS[status.automation.level]}</strong></p><p>${status.automation.message}</p></section>`
  return layout({ title: domain.name, viewer, current: '/domains', body })
}
