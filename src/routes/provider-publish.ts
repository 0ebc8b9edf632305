import { Elysia, t } from 'elysia'
import type { DmarcHostingStore } from '../../domain/dmarc/hosting-use-cases.ts'
import { publishDmarcThroughProvider } from '../../domain/dmarc/provider-publish.ts'
import type { ProviderDeps } from '../../domain/dns-providers/imports.ts'
import type { Published } from '../../domain/dns-providers/publish.ts'
import type { SpfDeps } from '../../domain/spf-management/managed-change.ts'
import { publishSpfThroughProvider } from '../../domain/spf-management/provider-publish.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item } from '../../plugins/envelope.ts'
import { DomainText } from '../../plugins/input-schemas.ts'
import { DNS_PROVIDER_MODELS, presentPlan, presentWrite } from './dns-provider-models.ts'
import { settle } from './provider-problems.ts'

// SPF management and hosted DMARC written into the user's own zone through a connected DNS
// provider (issue #7; docs/dns-providers.md "Publishing SPF and DMARC through a provider").

export interface ProviderPublishDeps {
  providers: ProviderDeps
  /** The hosted SPF records and their zone (SPF_ZONE). */
  spf: Pick<SpfDeps, 'store' | 'zone'>
  /** The hosted DMARC records. */
  hosting: Pick<DmarcHostingStore, 'domain' | 'get'>
  auth: AuthDeps
}

const PublishBody = t.Object(
  {
    dry_run: t.Optional(
      t.Boolean({ description: 'Answer the diff against what the provider holds; write nothing.' }),
    ),
  },
  { additionalProperties: false },
)
const domainParams = t.Object({ name: DomainText({ examples: ['example.com'] }) })
const errors = { ...authErrors, 403: 'Error', 404: 'Error' } as const

const present = ({ plan, dryRun, write }: Published) =>
  item(write === null ? presentPlan(plan, dryRun) : presentWrite(write))

/** What both publish use cases take from a request. */
const publishInput = (
  principal: { accountId: string; actor: string },
  name: string,
  body: { dry_run?: boolean },
) => ({ accountId: principal.accountId, name, actor: principal.actor, dryRun: body.dry_run === true })

/** Both routes: a token, the domain in the path, `{dry_run?}`, a write or its plan, or a 502. */
const publishRoute = (summary: string, description: string) =>
  ({
    auth: true,
    params: domainParams,
    body: PublishBody,
    parse: 'json',
    response: { 200: 'DnsProviderWriteItem', ...errors, 502: 'DnsProviderError' },
    detail: { summary, description },
  }) as const

export function providerPublishRoutes(deps: ProviderPublishDeps) {
  const { providers, spf, hosting } = deps
  return new Elysia({
    name: 'routes:provider-publish',
    prefix: '/domains',
    detail: { tags: ['DNS providers'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(DNS_PROVIDER_MODELS)
    .post(
      '/:name/spf/publish',
      async ({ principal, params, body, status }) => {
        const done = settle(
          await publishSpfThroughProvider({ spf, providers }, publishInput(principal, params.name, body)),
        )
        return done.ok ? present(done.value) : status(502, done.problem)
      },
      publishRoute(
        'Publish the managed SPF record through the connected provider',
        'Writes the record `GET /domains/{name}/spf` says to publish (`include:` the hosted record) into the TXT set at the domain, in the connected zone that holds it; other TXT values there are kept, every SPF value is replaced by this one (RFC 7208 §4.5). `dry_run: true` answers the diff. Written sets are read back from the provider and over DNS, audited, and can be rolled back (`POST /dns-providers/writes/{id}/rollback`). SPF management must be active (400 on `name`), a provider must hold the zone (400 on `domain`). A DNS write (10/minute per account; nothing to change is none).',
      ),
    )
    .post(
      '/:name/dmarc/host/publish',
      async ({ principal, params, body, status }) => {
        const done = settle(
          await publishDmarcThroughProvider(
            { hosting, providers },
            publishInput(principal, params.name, body),
          ),
        )
        return done.ok ? present(done.value) : status(502, done.problem)
      },
      publishRoute(
        'Point _dmarc at the hosted DMARC record through the connected provider',
        'Writes `_dmarc.<domain> CNAME <label>._dmarc.<SPF zone>` in place of the TXT set there (removed first: nothing may sit beside a CNAME; the diff shows it as `before`, a rollback restores it). `dry_run: true` answers the diff. The DMARC record must be hosted (`POST /domains/{name}/dmarc/host`; 400 on `name`), the domain verified (403), a provider must hold the zone (400 on `domain`). A DNS write (10/minute per account).',
      ),
    )
}
