import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { AutomationLevel } from '../../domain/domains/domain.ts'
import { AUTOMATION_LEVELS } from '../../domain/domains/domain.ts'
import { addDomain, getDomain, listDomains } from '../../domain/domains/use-cases.ts'
import { verifyDomain } from '../../domain/domains/verification.ts'
import type { Organization } from '../../domain/organizations/organization.ts'
import { domainStatus } from '../../domain/posture/check-domain.ts'
import { type Period, periodOf } from '../../domain/reports/period.ts'
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, type PageRequest } from '../../domain/shared/pagination.ts'
import type { SourceStatus } from '../../domain/sources/classify.ts'
import { listSources, type SourceFilter } from '../../domain/sources/list-sources.ts'
import { intelligenceDepsFor, sourceDepsFor } from '../../domain/sources/scoped-deps.ts'
import { sourceIntelligence } from '../../domain/sources/source-intelligence.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { presentStatus, REFRESH_POLICY } from '../routes/posture.ts'
import { dmarcPages } from './dmarc-pages.ts'
import { domainReportSections } from './domain-detail-views.ts'
import { ownershipPanel, waitingNotice } from './domain-ownership-views.ts'
import { domainListView, domainStatusView } from './domain-views.ts'
import { domainNotFound, limited, noteAccount, param, viewerOf } from './guards.ts'
import type { FieldErrors } from './layout.ts'
import { htmlResponse, redirectTo } from './layout.ts'
import type { DashboardServices } from './services.ts'
import { SOURCE_STATUSES, sourcesPageView } from './source-views.ts'
import { spfPages } from './spf-pages.ts'
import { spfProposalPages } from './spf-proposal-pages.ts'

// /domains and /domains/{name} (docs/dashboard.md): the list with its badges, organization filter and the
// add form; a domain's posture from the same use case and presentation as
// GET /api/v1/domains/{name}/status, with its last 30 days of reports and its top sources; every
// source at /domains/{name}/sources. The SPF page is spf-pages.ts.

const PER_PAGE = 50
const TOP_SOURCES = 5
const MAX_ORGANIZATION_PAGES = 10

const pageOf = (value: unknown) => (/^[1-9]\d{0,5}$/.test(String(value ?? '')) ? Number(value) : 1)

/** The last 30 days: the API's default period. */
function defaultPeriod(now: Date): Period {
  const found = periodOf({}, now)
  if (!found.ok) throw new Error('the default period is always valid')
  return found.value
}

/**
 * Sources and recommendations of a domain from the same reads and use cases as
 * GET /api/v1/domains/{name}/sources and …/sources/intelligence (src/routes/sources.ts).
 */
function sourceReader(s: DashboardServices) {
  const { figures } = s
  const { dns } = s
  return async (
    scope: { accountId: string; domainId: number; name: string },
    period: Period,
    filter: SourceFilter,
    page: PageRequest,
  ) => {
    const [list, intelligence] = await Promise.all([
      listSources(sourceDepsFor(figures, dns, scope), { domain: scope.name, period, filter, page }),
      sourceIntelligence(intelligenceDepsFor(figures, dns, scope), { domain: scope.name, period }),
    ])
    return { ...list, recommendations: intelligence.recommendations }
  }
}

export function domainPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const readSources = sourceReader(s)

  /** Every organization of the account, for the filter (pages of 100, bounded). */
  const organizationsOf = async (accountId: string): Promise<Organization[]> => {
    const out: Organization[] = []
    for (let page = 1; page <= MAX_ORGANIZATION_PAGES; page++) {
      const found = await s.organizations.list(accountId, { page, perPage: 100 })
      out.push(...found.items)
      if (out.length >= found.total || found.items.length === 0) break
    }
    return out
  }

  const listPage = async (
    session: ActiveSession,
    page: number,
    extra: {
      organization?: string
      form?: { value?: string; errors?: FieldErrors }
      notice?: string | null
      status?: number
    } = {},
  ) => {
    const organizations = await organizationsOf(session.accountId)
    // Only one of the account's organizations filters; any other value lists every domain.
    const asked = /^[1-9]\d{0,9}$/.test(extra.organization ?? '') ? Number(extra.organization) : null
    const organization = organizations.some((o) => o.id === asked) ? asked : null
    const filter = organization === null ? {} : { organizationId: organization }
    const found = await listDomains(s, session.accountId, filter, { page, perPage: PER_PAGE })
    const view = domainListView({
      viewer: viewerOf(session),
      domains: found.items,
      total: found.total,
      page,
      lastPage: Math.max(1, Math.ceil(found.total / PER_PAGE)),
      organizations,
      organization,
      form: extra.form,
      notice: extra.notice,
    })
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  /** The domain's id and its reports' summary and top sources over the last 30 days. */
  const reportData = async (accountId: string, name: string) => {
    const domainId = await s.reports.domainId(accountId, name)
    if (domainId === null) return null
    const period = defaultPeriod(s.now())
    const [summary, sources] = await Promise.all([
      s.reports.summary(accountId, domainId, period),
      readSources({ accountId, domainId, name }, period, {}, { page: 1, perPage: TOP_SOURCES }),
    ])
    // A quiet month: where the latest report is, so the page can link to it (docs/api.md).
    const latest = summary.totals.reports === 0 ? await s.reports.latestReportAt(accountId, domainId) : null
    return { period, summary, sources, latest }
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
    if (!result.ok) return domainNotFound(session)
    const { domain, check } = result.value
    const [reports, waiting, reportAddress] = await Promise.all([
      reportData(session.accountId, domain.name),
      domain.verifiedAt === null ? s.messages.waitingFor(session.accountId, domain.name) : 0,
      s.checks.reportAddress(session.accountId),
    ])
    const viewer = viewerOf(session)
    return htmlResponse(
      domainStatusView({
        viewer,
        domain,
        status: presentStatus(domain, check, false),
        notice: extra.notice,
        verification: extra.verification,
        reports: reports === null ? undefined : domainReportSections(domain.name, reports),
        ownership: ownershipPanel({ domain, reportAddress, csrfToken: viewer.csrfToken }),
        waiting: waitingNotice(domain, waiting),
      }),
    )
  }

  return new Elysia({ name: 'dashboard:domains' })
    .use(sessions)
    .get(
      '/domains',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const notice =
          query.password_reset === '1'
            ? 'Your password is changed; other sessions are logged out.'
            : query.password_set === '1'
              ? 'Your password is set: from now on, log in with your email and this password.'
              : null
        return listPage(session, pageOf(query.page), { notice, organization: query.organization })
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
    .get(
      '/domains/:name/sources',
      async ({ session, params, query, request }) => {
        noteAccount(request, session)
        const found = await getDomain(s, session.accountId, param(params.name))
        if (!found.ok) return domainNotFound(session)
        const name = found.value.name
        const domainId = await s.reports.domainId(session.accountId, name)
        if (domainId === null) return domainNotFound(session)
        const status = (SOURCE_STATUSES as readonly string[]).includes(String(query.status))
          ? (query.status as SourceStatus)
          : undefined
        const page = pageOf(query.page)
        // per_page as in the API (at most 100), 25 by default.
        const perPage = Math.min(MAX_PER_PAGE, pageOf(query.per_page ?? DEFAULT_PER_PAGE))
        const period = defaultPeriod(s.now())
        const scope = { accountId: session.accountId, domainId, name }
        const sources = await readSources(scope, period, { status }, { page, perPage })
        return htmlResponse(
          sourcesPageView({
            viewer: viewerOf(session),
            domain: name,
            period,
            sources: sources.items,
            total: sources.total,
            volume: sources.volume,
            recommendations: sources.recommendations,
            status: status ?? null,
            page,
            perPage,
            lastPage: Math.max(1, Math.ceil(sources.total / perPage)),
          }),
        )
      },
      { session: true },
    )
    .post(
      '/domains/:name/verify',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const result = await verifyDomain(
          { ...s.checks, dns: s.verificationDns },
          { accountId: session.accountId, name: param(params.name), now: s.now() },
        )
        if (!result.ok) return domainNotFound(session)
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
        if (!found.ok) return domainNotFound(session)
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
    .use(spfPages(s, sessions))
    .use(spfProposalPages(s, sessions))
    .use(dmarcPages(s, sessions))
}
