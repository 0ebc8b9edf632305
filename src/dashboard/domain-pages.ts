import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { AutomationLevel } from '../../domain/domains/domain.ts'
import { AUTOMATION_LEVELS } from '../../domain/domains/domain.ts'
import { addDomain, getDomain, listDomains } from '../../domain/domains/use-cases.ts'
import { verifyDomain } from '../../domain/domains/verification.ts'
import { domainStatus } from '../../domain/posture/check-domain.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { presentStatus, REFRESH_POLICY } from '../routes/posture.ts'
import { domainListView, domainStatusView } from './domain-views.ts'
import { limited, noteAccount, param, viewerOf } from './guards.ts'
import type { FieldErrors } from './layout.ts'
import { htmlResponse, messagePage, redirectTo } from './layout.ts'
import type { DashboardServices } from './services.ts'

// /domains and /domains/{name} (contract §7): the list with its badges and the add form, and a
// domain's posture from the same use case and presentation as GET /api/v1/domains/{name}/status.

const PER_PAGE = 50

export function domainPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const notFound = (session: ActiveSession) =>
    messagePage({
      status: 404,
      title: 'Domain not found',
      message: 'This domain is not in your account.',
      viewer: viewerOf(session),
    })

  const listPage = async (
    session: ActiveSession,
    page: number,
    extra: { form?: { value?: string; errors?: FieldErrors }; notice?: string | null; status?: number } = {},
  ) => {
    const found = await listDomains(s, session.accountId, {}, { page, perPage: PER_PAGE })
    const view = domainListView({
      viewer: viewerOf(session),
      domains: found.items,
      total: found.total,
      page,
      lastPage: Math.max(1, Math.ceil(found.total / PER_PAGE)),
      form: extra.form,
      notice: extra.notice,
    })
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  const statusPage = async (
    session: ActiveSession,
    name: string,
    extra: {
      notice?: string | null
      verification?: { verified: boolean; message: string; found: string[] }
    } = {},
  ) => {
    const result = await domainStatus(s.checks, {
      accountId: session.accountId,
      name,
      now: s.now(),
      refresh: false,
    })
    if (!result.ok) return notFound(session)
    const { domain, check } = result.value
    return htmlResponse(
      domainStatusView({
        viewer: viewerOf(session),
        domain,
        status: presentStatus(domain, check, false),
        notice: extra.notice,
        verification: extra.verification,
      }),
    )
  }

  return new Elysia({ name: 'dashboard:domains' })
    .use(sessions)
    .get(
      '/domains',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const page = /^[1-9]\d{0,5}$/.test(String(query.page ?? '')) ? Number(query.page) : 1
        const notice =
          query.password_reset === '1' ? 'Your password is changed; other sessions are logged out.' : null
        return listPage(session, page, { notice })
      },
      { session: true },
    )
    .post(
      '/domains',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const form = formOf(body)
        const value = form.get('domain_name') ?? ''
        const level = form.get('automation_level') ?? 'manual'
        const created = await addDomain(s, {
          accountId: session.accountId,
          domainName: value,
          automationLevel: (AUTOMATION_LEVELS as readonly string[]).includes(level)
            ? (level as AutomationLevel)
            : 'manual',
        })
        if (!created.ok) {
          const errors = created.failure.code === 'validation_failed' ? created.failure.errors : {}
          return listPage(session, 1, { form: { value, errors }, status: 400 })
        }
        return redirectTo(`/domains/${encodeURIComponent(created.value.name)}?added=1`)
      },
      { session: true, csrf: true },
    )
    .get(
      '/domains/:name',
      ({ session, params, query, request }) => {
        noteAccount(request, session)
        const notice = query.added === '1' ? 'Domain added. Its first check is below.' : null
        return statusPage(session, param(params.name), { notice })
      },
      { session: true },
    )
    .post(
      '/domains/:name/verify',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const result = await verifyDomain(
          { domains: s.domains, dns: s.verificationDns },
          { accountId: session.accountId, name: param(params.name), now: s.now() },
        )
        if (!result.ok) return notFound(session)
        return statusPage(session, result.value.domain.name, { verification: result.value.check })
      },
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/check',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        // Forced checks cost dozens of DNS queries: the API's per-account bound applies here too.
        const refused = await limited(
          s,
          [{ policy: REFRESH_POLICY, subject: session.accountId }],
          viewerOf(session),
        )
        if (refused) return refused
        const found = await getDomain(s, session.accountId, param(params.name))
        if (!found.ok) return notFound(session)
        const now = s.now()
        await domainStatus(s.checks, {
          accountId: session.accountId,
          name: found.value.name,
          now,
          refresh: true,
        })
        return redirectTo(`/domains/${encodeURIComponent(found.value.name)}`)
      },
      { session: true, csrf: true },
    )
}
