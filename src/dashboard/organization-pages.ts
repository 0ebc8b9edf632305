import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { listDomains, updateDomain } from '../../domain/domains/use-cases.ts'
import type { Organization } from '../../domain/organizations/organization.ts'
import {
  createOrganization,
  deleteOrganization,
  renameOrganization,
} from '../../domain/organizations/use-cases.ts'
import type { Failure } from '../../domain/shared/result.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import { type FieldErrors, htmlResponse, messagePage, redirectTo } from './layout.ts'
import {
  deleteOrganizationView,
  type OrganizationForms,
  organizationListView,
  renameOrganizationView,
} from './organization-views.ts'
import type { DashboardServices } from './services.ts'

// /organizations: the account's organizations and the domains in each (issue #8), renamed and
// deleted (issue #19), through the same use cases as /api/v1/organizations and
// PATCH /api/v1/domains/{name} (organization_id).

const PER_PAGE = 50
/** The assignment form's choices; an account with more organizations than this is not expected. */
const MAX_CHOICES = 500
/** Domain names suggested in the assignment form (any name of the account may still be typed). */
const MAX_SUGGESTIONS = 1000
/** An organization id in a path: a PostgreSQL `integer`, so at most nine digits are taken. */
const ID = /^[1-9]\d{0,8}$/

const NOTICES: Record<string, string> = {
  created: 'The organization is created.',
  assigned: 'The domain is assigned.',
  unassigned: 'The domain is no longer in an organization.',
  renamed: 'The organization is renamed.',
  deleted: 'The organization is deleted. Its domains stay in your account, in no organization.',
}

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

  // Another account's organization, a deleted one and a malformed id all answer this same page.
  const missing = (session: ActiveSession) =>
    messagePage({
      status: 404,
      title: 'Not found',
      message: 'This organization is not in your account.',
      viewer: viewerOf(session),
    })
  const organizationOf = async (session: ActiveSession, id: string): Promise<Organization | null> =>
    ID.test(id) ? s.organizations.get(session.accountId, Number(id)) : null

  return new Elysia({ name: 'dashboard:organizations' })
    .use(sessions)
    .get(
      '/organizations',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const q = query as Record<string, string | undefined>
        const page = /^[1-9]\d{0,5}$/.test(q.page ?? '') ? Number(q.page) : 1
        const notice = Object.keys(NOTICES).find((key) => q[key] === '1')
        return listPage(session, page, { notice: notice === undefined ? null : NOTICES[notice] })
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
    .get(
      '/organizations/:id/rename',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const organization = await organizationOf(session, param(params.id))
        if (organization === null) return missing(session)
        return htmlResponse(renameOrganizationView({ viewer: viewerOf(session), organization }))
      },
      { session: true },
    )
    .post(
      '/organizations/:id/rename',
      async ({ session, params, body, request }) => {
        noteAccount(request, session)
        const organization = await organizationOf(session, param(params.id))
        if (organization === null) return missing(session)
        const name = formOf(body).get('name') ?? ''
        const renamed = await renameOrganization(s, {
          accountId: session.accountId,
          id: organization.id,
          name,
        })
        if (!renamed.ok) {
          // Deleted since it was read: the same answer as any organization not in the account.
          if (renamed.failure.code === 'not_found') return missing(session)
          const errors = fieldErrors(renamed.failure, 'name')
          const view = renameOrganizationView({
            viewer: viewerOf(session),
            organization,
            form: { name, errors },
          })
          return htmlResponse(view, { status: 400 })
        }
        return redirectTo('/organizations?renamed=1')
      },
      { session: true, csrf: true },
    )
    .get(
      '/organizations/:id/delete',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const organization = await organizationOf(session, param(params.id))
        if (organization === null) return missing(session)
        return htmlResponse(deleteOrganizationView({ viewer: viewerOf(session), organization }))
      },
      { session: true },
    )
    .post(
      '/organizations/:id/delete',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const id = param(params.id)
        if (!ID.test(id)) return missing(session)
        const deleted = await deleteOrganization(s, { accountId: session.accountId, id: Number(id) })
        if (!deleted.ok) return missing(session)
        s.logger.info('organization deleted', {
          account_id: session.accountId,
          organization_id: Number(id),
          ungrouped_domains: deleted.value.ungrouped,
        })
        return redirectTo('/organizations?deleted=1')
      },
      { session: true, csrf: true },
    )
}
