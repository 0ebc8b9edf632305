import { Elysia, t } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
import type { AggregateReportReads } from '../../domain/reports/aggregate-reads.ts'
import { MAX_DAYS, type Period, periodOf } from '../../domain/reports/period.ts'
import { offsetOf, pageMeta } from '../../domain/shared/pagination.ts'
import { invalid, type Result } from '../../domain/shared/result.ts'
import { classifyStats, listSources } from '../../domain/sources/list-sources.ts'
import type { SourceFigures } from '../../domain/sources/ports.ts'
import { intelligenceDepsFor, sourceDepsFor } from '../../domain/sources/scoped-deps.ts'
import { simulateProposal } from '../../domain/sources/simulate-proposal.ts'
import { sourceIntelligence } from '../../domain/sources/source-intelligence.ts'
import { resolveSpfTree } from '../../domain/spf/include-tree.ts'
import { canonicalIpText } from '../../domain/spf/ip.ts'
import { apiModels, authErrors, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, pageRequest } from '../../plugins/envelope.ts'
import { FailureError, unwrap } from '../../plugins/failures.ts'
import { DomainText, IpText, Line } from '../../plugins/input-schemas.ts'
import { domainIdOf } from './domain-scope.ts'
import { emptyPeriodMeta, PeriodQuery } from './reports.ts'
import { presentSimulation, SimulateBody, SimulationModel } from './simulation-models.ts'
import {
  IntelligenceModel,
  OverrideStatusInput,
  presentPeriod,
  presentReadiness,
  presentRecommendation,
  presentServiceGroup,
  presentSource,
  SourceListModel,
  SourceModel,
  StatusFilter,
} from './source-models.ts'

// Sending sources of a domain, recommendations and simulations (issue #5): docs/sources.md and
// docs/simulation.md. Figures come from the daily rollups of the caller's account and domain only.

export interface SourceRouteDeps {
  figures: SourceFigures
  reports: Pick<AggregateReportReads, 'domainId' | 'latestReportAt'>
  auth: AuthDeps
  dns: DnsResolver
  now: () => Date
}

const domainErrors = { ...authErrors, 403: 'Error' } as const

/**
 * `{source}` in the path: an IP address in any spelling, answered in canonical form. An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.7`) is its IPv4 address, as intake stores it.
 */
function sourceIp(text: string): Result<string> {
  const canonical = canonicalIpText(text.trim())
  if (canonical === null) return invalid('source', 'The source must be an IP address (IPv4 or IPv6).')
  return { ok: true, value: canonical }
}

export function sourceRoutes(deps: SourceRouteDeps) {
  const { figures } = deps
  const spfTree = (domain: string) => resolveSpfTree({ dns: deps.dns }, domain)

  /** The caller's domain: its id (403 domain_not_found otherwise) and its normalised name. */
  async function domainOf(accountId: string, name: string) {
    const id = await domainIdOf(deps.reports, accountId, name)
    const checked = normalizeDomainName(name)
    return { accountId, domainId: id, name: checked.ok ? checked.name : name }
  }

  type Scope = Awaited<ReturnType<typeof domainOf>>
  const sourceDeps = (scope: Scope) => sourceDepsFor(figures, deps.dns, scope)
  const volumeOf = async (scope: Scope, period: Period) =>
    (await figures.daily(scope, period)).reduce((sum, day) => sum + day.messages, 0)

  return new Elysia({ name: 'routes:sources', prefix: '/domains', detail: { tags: ['Sources'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      SourceList: SourceListModel,
      SourceItem: t.Object({ data: SourceModel }),
      SourceUpdate: t.Object({
        status: t.Nullable(OverrideStatusInput, {
          description: 'Your verdict on the IP; null removes it and the classification applies again',
        }),
        note: t.Optional(
          t.Nullable(Line({ maxLength: 500, description: 'Omitted keeps the stored note; null clears it' })),
        ),
      }),
      SourceIntelligence: IntelligenceModel,
      SimulationRequest: SimulateBody,
      Simulation: SimulationModel,
    })
    .get(
      '/:name/sources',
      async ({ principal, params, query }) => {
        const scope = await domainOf(principal.accountId, params.name)
        const period = unwrap(periodOf(query, deps.now()))
        const page = pageRequest(query)
        const found = await listSources(sourceDeps(scope), {
          domain: scope.name,
          period,
          filter: { status: query.status, service: query.service, q: query.q },
          page,
        })
        return {
          data: found.items.map((view) => presentSource(view, found.volume)),
          meta: {
            ...pageMeta(found.total, page),
            period: presentPeriod(period),
            services: found.services.map(presentServiceGroup),
            // No source at all in the period (whatever the filters): where the latest report is.
            ...(await emptyPeriodMeta(
              deps.reports,
              scope.accountId,
              scope.domainId,
              found.services.length === 0,
            )),
          },
        }
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        query: t.Object({
          ...PeriodQuery,
          ...PaginationQuery,
          status: t.Optional(StatusFilter),
          service: t.Optional(Line({ maxLength: 100, description: 'A catalog service id' })),
          q: t.Optional(
            Line({ maxLength: 200, description: 'IP prefix, or part of the PTR or service name' }),
          ),
        }),
        response: { 200: 'SourceList', ...domainErrors },
        detail: {
          summary:
            'Sending sources of a domain, classified (last 30 days by default; from/to up to 366 days)',
          description:
            'Every IP that sent as the domain in the period, with the sending service it belongs to (catalog, PTR, SPF includes, DKIM d=), a status, your override, and its figures; heaviest first. `meta.services` sums all sources by service. When the period holds no source at all, `meta.latest_report_at` says where the domain’s most recent report begins.',
        },
      },
    )
    .get(
      '/:name/sources/intelligence',
      async ({ principal, params, query }) => {
        const scope = await domainOf(principal.accountId, params.name)
        const period = unwrap(periodOf(query, deps.now()))
        const page = pageRequest(query)
        const result = await sourceIntelligence(intelligenceDepsFor(figures, deps.dns, scope), {
          domain: scope.name,
          period,
        })
        const start = offsetOf(page)
        return {
          data: result.recommendations.slice(start, start + page.perPage).map(presentRecommendation),
          meta: {
            ...pageMeta(result.recommendations.length, page),
            period: presentPeriod(period),
            readiness: presentReadiness(result.readiness),
            // No mail reported in the period: where the domain's latest report is (docs/api.md).
            ...(await emptyPeriodMeta(
              deps.reports,
              scope.accountId,
              scope.domainId,
              (await volumeOf(scope, period)) === 0,
            )),
          },
        }
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        query: t.Object({ ...PeriodQuery, ...PaginationQuery }),
        response: { 200: 'SourceIntelligence', ...domainErrors },
        detail: {
          summary: 'Recommendations from the domain’s sources, and DMARC policy readiness',
          description:
            'Authorise a service in SPF, enable DKIM, block spoofing, forwarding, unknown volume, advance the policy: sorted by priority, then messages concerned. Rules and thresholds: docs/sources.md. `meta.readiness` is computed over the last 14 days. When the period holds no reported mail, `meta.latest_report_at` says where the domain’s most recent report begins.',
        },
      },
    )
    .patch(
      '/:name/sources/:source',
      async ({ principal, params, body }) => {
        const scope = await domainOf(principal.accountId, params.name)
        const ip = unwrap(sourceIp(params.source))
        // A verdict is accepted for an IP that sent for the domain in the longest period the API
        // shows; the source is answered with its figures over that period.
        const period = unwrap(periodOf({ days: MAX_DAYS }, deps.now()))
        const [stats, volume] = await Promise.all([
          figures.stats(scope, { ...period, ip }),
          volumeOf(scope, period),
        ])
        if (stats.length === 0) throw new FailureError({ code: 'not_found', resource: 'source' })
        const [override, tree] = await Promise.all([
          figures.setOverride(scope, { ip, status: body.status, note: body.note, now: deps.now() }),
          spfTree(scope.name),
        ])
        const [view] = classifyStats({
          domain: scope.name,
          stats,
          overrides: override === null ? [] : [override],
          spfTree: tree,
        })
        return item(presentSource(view!, volume))
      },
      {
        auth: true,
        params: t.Object({ name: DomainText(), source: IpText({ examples: ['203.0.113.7'] }) }),
        body: 'SourceUpdate',
        parse: 'json',
        response: { 200: 'SourceItem', ...domainErrors, 404: 'Error' },
        detail: {
          summary: 'Mark a source legitimate, unwanted or a forwarder (or clear the mark)',
          description:
            'The path names the source by IP address, in any spelling. An IP that did not send for the domain in the last 90 days is 404 `not_found`. The answer shows the source over the last 90 days.',
        },
      },
    )
    .post(
      '/:name/simulate',
      async ({ principal, params, body }) => {
        const scope = await domainOf(principal.accountId, params.name)
        const period = unwrap(periodOf({ days: body.days }, deps.now()))
        const simulation = unwrap(
          await simulateProposal(
            { stats: sourceDeps(scope).stats, dns: deps.dns, now: deps.now },
            { domain: scope.name, period, spfRecord: body.spf_record, dmarcRecord: body.dmarc_record },
          ),
        )
        return item(presentSimulation(presentPeriod(period), simulation))
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        body: 'SimulationRequest',
        parse: 'json',
        response: { 200: 'Simulation', ...domainErrors },
        detail: {
          summary: 'What a proposed SPF record or DMARC policy would do to the last N days of mail',
          description:
            'Replays the per-source report figures against `spf_record` (through check_host, the 500 largest sources) and/or `dmarc_record` (p, pct, t=y). At least one of the two is required. Approximations: docs/simulation.md.',
        },
      },
    )
}
