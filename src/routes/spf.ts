import { Elysia, t } from 'elysia'
import type { PublishDeps } from '../../domain/dns-providers/publish.ts'
import type { ReportDomainIds } from '../../domain/reports/aggregate-reads.ts'
import { fail, type Result } from '../../domain/shared/result.ts'
import type { SpfAutomationDeps } from '../../domain/spf-management/proposals.ts'
import {
  activateThroughProvider,
  addSourceThroughProvider,
  detectThroughProvider,
} from '../../domain/spf-management/provider-sync.ts'
import { DETECTION_DAYS } from '../../domain/spf-management/source-use-cases.ts'
import { getSpf, listVersions, rollback } from '../../domain/spf-management/use-cases.ts'
import { apiModels, authErrors, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { DomainText, IpText } from '../../plugins/input-schemas.ts'
import { ActivateBody, AddSourceBody, SPF_MODELS } from './spf-models.ts'
import {
  presentManagement,
  presentProposal,
  presentProviderSync,
  presentPublish,
  presentPublished,
  presentSource,
  presentVersion,
  sourceOf,
} from './spf-presenters.ts'

// SPF management of a domain (issue #5): docs/spf-management.md ("Storage and API"), docs/api.md.

export interface SpfRouteDeps {
  /** The SPF management use cases' deps (src/compose/spf.ts), shared with the dashboard. */
  spf: SpfAutomationDeps
  reports: ReportDomainIds
  auth: AuthDeps
  /** Domains whose zone is on a connected DNS provider get add-to-spf written through it. */
  providers?: PublishDeps
}

/** Model errors name sources by index as `sources[3].network`; the API's fields are dotted. */
function dotted<T>(result: Result<T>): T {
  if (result.ok || result.failure.code !== 'validation_failed') return unwrap(result)
  const rename = (field: string) => field.replace(/\[(\d+)\]/g, '.$1')
  const errors = Object.fromEntries(Object.entries(result.failure.errors).map(([k, v]) => [rename(k), v]))
  return unwrap(fail({ ...result.failure, message: rename(result.failure.message), errors }))
}

const writeErrors = { ...authErrors, 403: 'Error' } as const
const domainParams = t.Object({ name: DomainText({ examples: ['example.com'] }) })

export function spfRoutes(deps: SpfRouteDeps) {
  const useCases = deps.spf
  const providers = deps.providers
  return new Elysia({ name: 'routes:spf', prefix: '/domains', detail: { tags: ['SPF'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(SPF_MODELS)
    .get(
      '/:name/spf',
      async ({ principal, params }) => {
        const spf = unwrap(await getSpf(useCases, { accountId: principal.accountId, name: params.name }))
        return item({
          domain: spf.domain.name,
          verified: spf.domain.verified,
          automation_level: spf.domain.automationLevel,
          published: presentPublished(spf.published, spf.analysis),
          managed: spf.managed !== null,
          management: presentManagement(spf.managed),
        })
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'SpfRecord', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'Current SPF record',
          description:
            'The published record with its analysis (lookups, void lookups, warnings, include tree) and, when SPF management is active, the hosted configuration, the records served and the record to publish at the domain.',
        },
      },
    )
    .post(
      '/:name/spf/activate',
      async ({ principal, params, body }) => {
        const result = dotted(
          await activateThroughProvider(
            { ...useCases, providers },
            {
              accountId: principal.accountId,
              name: params.name,
              actor: principal.actor,
              sources: body?.sources?.map(sourceOf),
              all: body?.all,
              flatten: body?.flatten,
            },
          ),
        )
        return item({
          domain: result.domain,
          changed: result.changed,
          activated: result.activated,
          management: presentManagement(result.view)!,
          provider: presentProviderSync(result.provider),
        })
      },
      {
        auth: true,
        params: domainParams,
        body: t.Optional(ActivateBody),
        parse: 'json',
        response: { 200: 'SpfActivation', ...writeErrors },
        detail: {
          summary: 'Activate SPF management',
          description:
            'Verified domains only (403 `forbidden` otherwise). Serves the sources at `<label>.<SPF_ZONE>` and answers the record to publish at the domain (its own with `include:<hosted>`). Sends `spf.activated` once; activating again returns the current state, or with different settings saves them as a new version. Counts as a DNS write (10/minute per account) when it writes. 400 `spf_lookup_limit_exceeded` when the sources need more than the lookup budget and `flatten` is `never`.',
        },
      },
    )
    .post(
      '/:name/spf/detect-sources',
      async ({ principal, params }) => {
        const result = unwrap(
          await detectThroughProvider(
            { ...useCases, providers },
            {
              accountId: principal.accountId,
              name: params.name,
              actor: principal.actor,
            },
          ),
        )
        return item({
          domain: result.domain,
          period: { from: result.since, days: DETECTION_DAYS },
          automation_level: result.automationLevel,
          applied: result.applied,
          proposals: result.proposals.map(presentProposal),
          management: presentManagement(result.managed),
          provider: presentProviderSync(result.provider),
        })
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'SpfDetection', ...writeErrors },
        detail: {
          summary: 'Auto-detect SPF sources from DMARC reports',
          description:
            "Senders of the last 30 days that look legitimate (a known service with DKIM-aligned mail, or marked legitimate) but fail SPF alignment, one proposal per term with its volumes. For managed domains at automation level `automatic` the proposals are applied as a new version (reason 'detected sources', a DNS write); otherwise they are only proposed (approve one with add-to-spf).",
        },
      },
    )
    .post(
      '/:name/sources/:source/add-to-spf',
      async ({ principal, params, body }) => {
        const result = dotted(
          await addSourceThroughProvider(
            { ...useCases, providers },
            {
              accountId: principal.accountId,
              name: params.name,
              ip: params.source,
              include: body?.include,
              network: body?.network,
              actor: principal.actor,
            },
          ),
        )
        const { term: _term, ...source } = presentSource(result.source)
        return item({
          domain: result.domain,
          source,
          service: result.service,
          changed: result.changed,
          managed: result.managed !== null,
          publish: presentPublish(result.publish),
          management: presentManagement(result.managed),
          provider: presentProviderSync(result.provider),
        })
      },
      {
        auth: true,
        params: t.Object({
          name: DomainText({ examples: ['example.com'] }),
          source: IpText({ description: 'A source IP of the domain', examples: ['149.72.10.20'] }),
        }),
        body: t.Optional(AddSourceBody),
        parse: 'json',
        response: { 200: 'SpfSourceAdded', ...writeErrors, 404: 'Error' },
        detail: {
          summary: 'Add the source to the SPF record',
          description:
            "Authorises a source IP seen in the domain's reports (404 `not_found` otherwise): as its service's documented include when the catalog knows the service, else as the address (`ip4:`/`ip6:`); `include` or `network` in the body override that. Managed domains (verified only) get a new version, a DNS write; unmanaged ones get the record to publish and nothing is written. 400 `spf_lookup_limit_exceeded` when the result needs more than 10 DNS lookups and flattening is off (always, for unmanaged domains).",
        },
      },
    )
    .get(
      '/:name/spf/versions',
      async ({ principal, params, query }) => {
        const page = pageRequest(query)
        const versions = unwrap(
          await listVersions(useCases, { accountId: principal.accountId, name: params.name, page }),
        )
        return list(versions, page, presentVersion)
      },
      {
        auth: true,
        params: domainParams,
        query: t.Object(PaginationQuery),
        response: { 200: 'SpfVersionList', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'Versions of the managed SPF record',
          description:
            'Newest first, each with its configuration, the records it served, who made it and why, and what it changed. Empty for a domain that is not managed.',
        },
      },
    )
    .post(
      '/:name/spf/rollback',
      async ({ principal, params, body }) => {
        const result = unwrap(
          await rollback(useCases, {
            accountId: principal.accountId,
            name: params.name,
            version: body.version,
            actor: principal.actor,
          }),
        )
        return item({
          domain: result.domain,
          changed: result.changed,
          management: presentManagement(result.view)!,
        })
      },
      {
        auth: true,
        params: domainParams,
        body: 'SpfRollback',
        parse: 'json',
        response: { 200: 'SpfRolledBack', ...writeErrors, 404: 'Error' },
        detail: {
          summary: 'Roll the managed SPF record back to a version',
          description:
            'Saves a new version serving exactly what the given version served (its configuration and records). Rolling back to what is served already changes nothing. An unknown version, or a domain that is not managed, is 404 `not_found`. A DNS write; verified domains only.',
        },
      },
    )
}
