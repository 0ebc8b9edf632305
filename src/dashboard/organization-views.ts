import type { Organization } from '../../domain/organizations/organization.ts'
import { MAX_ORGANIZATION_NAME } from '../../domain/organizations/use-cases.ts'
import { time } from './domain-views.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout, type Viewer } from './layout.ts'

// /organizations: the account's organizations (groups of domains) with their domain counts, the
// create form and the form that puts a domain in an organization (or takes it out); the rename form
// and the delete confirmation of one organization.

export interface OrganizationForms {
  create?: { name?: string; errors?: FieldErrors }
  assign?: { domain?: string; organizationId?: string; errors?: FieldErrors }
}

/** The domains filtered to one organization (the filter lives on the domain list). */
export const organizationDomainsHref = (id: number) => `/domains?organization=${id}`

function assignForm(
  csrf: SafeHtml,
  input: {
    organizations: Organization[]
    domainNames: string[]
    form: OrganizationForms['assign']
  },
): SafeHtml {
  const errors = input.form?.errors ?? {}
  const chosen = input.form?.organizationId ?? ''
  const orgProblems = errors.organization_id ?? []
  // A text field with suggestions: it works for an account of any size and without script.
  return html`<form method="post" action="/organizations/assign" class="inline panel" novalidate>
${csrf}
${field({ name: 'domain', label: 'Domain', value: input.form?.domain ?? '', hint: 'A domain of your account.', required: true, errors, extra: html` list="domain-names" autocomplete="off" spellcheck="false"` })}
<datalist id="domain-names">${input.domainNames.map((name) => html`<option value="${name}"></option>`)}</datalist>
<div><label for="organization_id">Organization</label>
<select id="organization_id" name="organization_id"${orgProblems.length ? html` aria-invalid="true" aria-describedby="organization_id-error"` : ''}>
<option value="">No organization</option>${input.organizations.map(
    (o) => html`<option value="${o.id}"${String(o.id) === chosen ? html` selected` : ''}>${o.name}</option>`,
  )}</select>
${orgProblems.length ? html`<p class="field-error" id="organization_id-error">${orgProblems.join(' ')}</p>` : ''}</div>
<div><button type="submit">Assign</button></div>
</form>`
}

export function organizationListView(input: {
  viewer: Viewer
  organizations: Organization[]
  /** Every organization, for the assignment form (the table is paginated). */
  choices: Organization[]
  domainNames: string[]
  total: number
  page: number
  lastPage: number
  forms?: OrganizationForms
  notice?: string | null
}): SafeHtml {
  const csrf = csrfField(input.viewer.csrfToken)
  const createErrors = input.forms?.create?.errors ?? {}
  const assignErrors = input.forms?.assign?.errors ?? {}
  const rows = input.organizations.map(
    (o) => html`<tr>
<th scope="row"><a href="${organizationDomainsHref(o.id)}">${o.name}</a></th>
<td class="num">${o.domainCount}</td>
<td>${time(o.createdAt)}</td>
<td><div class="actions"><a href="/organizations/${o.id}/rename" aria-label="Rename ${o.name}">Rename</a><a href="/organizations/${o.id}/delete" aria-label="Delete ${o.name}">Delete</a></div></td></tr>`,
  )
  const table =
    input.organizations.length === 0
      ? html`<p class="panel">No organizations yet. Create one above to group the domains of a client, a brand or a department.</p>`
      : html`<table>
<caption class="skip">Your organizations</caption>
<thead><tr><th scope="col">Organization</th><th scope="col">Domains</th><th scope="col">Created</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table>`
  const pager =
    input.lastPage > 1
      ? html`<nav aria-label="Pages" class="actions">${input.page > 1 ? html`<a href="/organizations?page=${input.page - 1}">Previous</a>` : ''}<span>Page ${input.page} of ${input.lastPage}</span>${input.page < input.lastPage ? html`<a href="/organizations?page=${input.page + 1}">Next</a>` : ''}</nav>`
      : ''
  const assign =
    input.choices.length === 0
      ? html`<p class="panel muted">Create an organization first, then put domains in it here.</p>`
      : assignForm(csrf, {
          organizations: input.choices,
          domainNames: input.domainNames,
          form: input.forms?.assign,
        })
  const body = html`<h1>Organizations</h1>
<p class="lead">Group domains by client, brand or department. A domain belongs to at most one organization.</p>
${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : ''}
${errorSummary(createErrors, { name: 'Organization name' })}
<h2>Create an organization</h2>
<form method="post" action="/organizations" class="inline panel" novalidate>
${csrf}
${field({ name: 'name', label: 'Organization name', value: input.forms?.create?.name ?? '', required: true, errors: createErrors, extra: html` maxlength="${MAX_ORGANIZATION_NAME}"` })}
<div><button type="submit">Create organization</button></div>
</form>
<h2>${input.total} ${input.total === 1 ? 'organization' : 'organizations'}</h2>
${table}
${pager}
<h2 id="assign">Put a domain in an organization</h2>
${errorSummary(assignErrors, { domain: 'Domain', organization_id: 'Organization' })}
${assign}`
  return layout({ title: 'Organizations', viewer: input.viewer, current: '/organizations', body })
}

export function renameOrganizationView(input: {
  viewer: Viewer
  organization: Organization
  form?: { name?: string; errors?: FieldErrors }
}): SafeHtml {
  const { organization: o } = input
  const errors = input.form?.errors ?? {}
  const body = html`<p><a href="/organizations">← Organizations</a></p>
<h1>Rename ${o.name}</h1>
${errorSummary(errors, { name: 'New name' })}
<form method="post" action="/organizations/${o.id}/rename" class="panel" novalidate>
${csrfField(input.viewer.csrfToken)}
${field({ name: 'name', label: 'New name', value: input.form?.name ?? o.name, hint: 'Unique in your account, ignoring case. Its domains stay in it.', required: true, errors, extra: html` maxlength="${MAX_ORGANIZATION_NAME}"` })}
<div class="actions"><button type="submit">Rename organization</button><a href="/organizations">Cancel</a></div>
</form>`
  return layout({ title: `Rename ${o.name}`, viewer: input.viewer, current: '/organizations', body })
}

export function deleteOrganizationView(input: { viewer: Viewer; organization: Organization }): SafeHtml {
  const { organization: o } = input
  const domains =
    o.domainCount === 0
      ? 'It has no domains.'
      : `Its ${o.domainCount === 1 ? 'domain stays' : `${o.domainCount} domains stay`} in your account, in no organization; ${o.domainCount === 1 ? 'its' : 'their'} reports, settings and DNS records are not touched.`
  const body = html`<p><a href="/organizations">← Organizations</a></p>
<h1>Delete ${o.name}?</h1>
<section class="panel">
<p>${domains}</p>
<form method="post" action="/organizations/${o.id}/delete" class="actions">${csrfField(input.viewer.csrfToken)}<button type="submit" class="danger">Delete organization</button><a href="/organizations">Cancel</a></form>
</section>`
  return layout({ title: `Delete ${o.name}`, viewer: input.viewer, current: '/organizations', body })
}
