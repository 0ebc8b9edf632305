import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { listDomains, updateDomain } from '../../domain/domains/use-cases.ts'
import { createOrganization } from '../../domain/organizations/use-cases.ts'
import type { Failure } from '../../domain/shared/result.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, viewerOf } from './guards.ts'
import { type FieldErrors, htmlResponse, redirectTo } from './layout.ts'
import { type OrganizationForms, organizationListView } from './organization-views.ts'
import type { DashboardServices } from './services.ts'

// /organizations: the account's organizations and the domains in each (issue #8), through the same
// use cases as POST /api/v1/organizations and PATCH /api/v1/domains/{name} (organization_id).
// Renaming and deleting are not offered: neither the API nor the store has them yet.

const PER_PAGE = 50
/** The assignment form's choices; an account with more organizations than this is not expected. */
const MAX_CHOICES = 500
/** Domain names suggested in the assignment form (any name of the account may still be typed). */
const MAX_SUGGESTIONS = 1000

function fieldErrors(failure: Failure, fallbackField: string): FieldErrors {
  if (failure.code === 'validation_failed') return failure.errors
  if (failure.code === 'domain_not_found') return { domain: ['This domain is not in your account.'] }
  return { [fallbackField]: ['That did not work. Try again.'] }
}

export function organizationPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const listPage = async (
    session: ActiveSession,
    page: number,
    extra: { forms?: OrganizationForms; notice?: string | null; status?: number } = {},
  ) => {
    const [found, choices, domains] = await Promise.all([
      s.organizations.list(session.accountId, { page, perPage: PER_PAGE }),
      s.organizations.list(session.accountId, { page: 1, perPage: MAX_CHOICES }),
      listDomains(s, session.accountId, {}, { page: 1, perPage: MAX_SUGGESTIONS }),
    ])
    const view = organizationListView({
      viewer: viewerOf(session),
      organizations: found.items,
      choices: choices.items,
      domainNames: domains.items.map((d) => d.name),
      total: found.total,
      page,
      lastPage: Math.max(1, Math.ceil(found.total / PER_PAGE)),
      forms: extra.forms,
      notice: extra.notice,
    })
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  return new Elysia({ name: 'dashboard:organizations' })
    .use(sessions)
    .get(
      '/organizations',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const q = query as Record<string, string | undefined>
        const page = /^[1-9]\d{0,5}$/.test(q.page ?? '') ? Number(q.page) : 1
        const notice =
          q.created === '1'
            ? 'The organization is created.'
            : q.assigned === '1'
              ? 'The domain is assigned.'
              : q.unassigned === '1'
                ? 'The domain is no longer in an organization.'
                : null
        return listPage(session, page, { notice })
      },
      { session: true },
    )
    .post(
      '/organizations',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const name = formOf(body).get('name') ?? ''
        const created = await createOrganization(s, { accountId: session.accountId, name })
        if (!created.ok) {
          const errors = fieldErrors(created.failure, 'name')
          return listPage(session, 1, { forms: { create: { name, errors } }, status: 400 })
        }
        return redirectTo('/organizations?created=1')
      },
      { session: true, csrf: true },
    )
    .post(
      '/organizations/assign',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const form = formOf(body)
        const domain = (form.get('domain') ?? '').trim()
        const organizationId = form.get('organization_id') ?? ''
        const back = (errors: FieldErrors) =>
          listPage(session, 1, { forms: { assign: { domain, organizationId, errors } }, status: 400 })
        if (domain === '') return back({ domain: ['Enter a domain of your account.'] })
        if (organizationId !== '' && !/^[1-9]\d{0,8}$/.test(organizationId))
          return back({ organization_id: ['Choose an organization from the list.'] })
        // Scoped by the session's account: another account's domain or organization is not found.
        const updated = await updateDomain(s, {
          accountId: session.accountId,
          name: domain,
          patch: { organizationId: organizationId === '' ? null : Number(organizationId) },
        })
        if (!updated.ok) return back(fieldErrors(updated.failure, 'domain'))
        return redirectTo(organizationId === '' ? '/organizations?unassigned=1' : '/organizations?assigned=1')
      },
      { session: true, csrf: true },
    )
}
