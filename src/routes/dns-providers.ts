import { Elysia, t } from 'elysia'
import type { ProviderDeps } from '../../domain/dns-providers/imports.ts'
import { settlePlan } from '../../domain/dns-providers/publish.ts'
import {
  authenticateProvider,
  deleteConnection,
  resolveConnection,
} from '../../domain/dns-providers/use-cases.ts'
import { planWrite, rollbackWrite } from '../../domain/dns-providers/writes.ts'
import { fail } from '../../domain/shared/result.ts'
import { apiModels, authErrors, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { IdText } from '../../plugins/input-schemas.ts'
import {
  DNS_PROVIDER_MODELS,
  ImportBody,
  presentConnection,
  presentImport,
  presentPlan,
  presentWrite,
} from './dns-provider-models.ts'
import { settle } from './provider-problems.ts'

// DNS provider connections, domain import and writes through providers (issue #7; docs/api.md
// "DNS providers", docs/dns-providers.md "Connections, import and writes").

export interface DnsProviderRouteDeps {
  /** The DNS provider use cases' deps (src/compose/dns-providers.ts). */
  providers: ProviderDeps
  auth: AuthDeps
  now: () => Date
}

const idParams = t.Object({ id: IdText({ description: 'A UUID' }) })
const notFound = (resource: string) => unwrap(fail({ code: 'not_found', resource }))
const writeErrors = { ...authErrors, 403: 'Error', 404: 'Error' } as const

export function dnsProviderRoutes(deps: DnsProviderRouteDeps) {
  const useCases = deps.providers
  const { imports } = useCases

  return new Elysia({
    name: 'routes:dns-providers',
    prefix: '/dns-providers',
    detail: { tags: ['DNS providers'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(DNS_PROVIDER_MODELS)
    .post(
      '/authenticate',
      async ({ principal, body, status }) => {
        const result = settle(
          await authenticateProvider(useCases, {
            accountId: principal.accountId,
            provider: body.provider,
            name: body.name,
            credentials: body.credentials,
          }),
        )
        if (!result.ok) return status(502, result.problem)
        return status(201, item(presentConnection(result.value)))
      },
      {
        auth: true,
        body: 'DnsProviderAuthenticate',
        parse: 'json',
        response: { 201: 'DnsProviderConnectionItem', ...authErrors, 502: 'DnsProviderError' },
        detail: {
          summary: 'Connect a DNS provider',
          description:
            'Checks the credentials against the provider, then stores the connection; the key, token or TSIG secret is sealed and never returned. 400 `dns_provider_authentication_failed` (with `provider`) when the provider rejects them; 400 on `credentials.base_url` (or `credentials.server`) for an endpoint that is not https with public addresses (unless the operator allows private targets); 502 `dns_provider_error` when the provider cannot be reached.',
        },
      },
    )
    .get(
      '',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        return list(await useCases.connections.list(principal.accountId, page), page, presentConnection)
      },
      {
        auth: true,
        query: t.Object(PaginationQuery),
        response: { 200: 'DnsProviderConnectionList', ...authErrors },
        detail: { summary: 'Connected DNS providers', description: 'Oldest first, without secrets.' },
      },
    )
    .delete(
      '/:id',
      async ({ principal, params, status }) => {
        unwrap(await deleteConnection(useCases, principal.accountId, params.id))
        return status(204, undefined)
      },
      {
        auth: true,
        params: idParams,
        response: { 204: t.Void(), ...authErrors, 404: 'Error' },
        detail: {
          summary: 'Remove a DNS provider connection',
          description:
            'Forgets the credentials (the provider is not told) and the connection’s imports. Writes made through it stay in the log, without rollback.',
        },
      },
    )
    .post(
      '/:provider/import-domains',
      async ({ principal, params, body, status }) => {
        const connection = unwrap(await resolveConnection(useCases, principal.accountId, params.provider))
        const zones = body?.zones
          ? [...new Set(body.zones.map((z) => z.trim().toLowerCase().replace(/\.$/, '')))]
          : null
        const created = await imports.create(principal.accountId, {
          connectionId: connection.id,
          zones,
          now: deps.now(),
        })
        return status(202, item(presentImport(created)))
      },
      {
        auth: true,
        params: t.Object({
          provider: IdText({
            description: 'A connection id, or a provider kind the account has exactly one connection of',
          }),
        }),
        body: t.Optional(ImportBody),
        parse: 'json',
        response: { 202: 'DnsProviderImportItem', ...authErrors, 404: 'Error' },
        detail: {
          summary: 'Import the provider’s zones as domains',
          description:
            'A background job creates a domain for each zone (or each of `zones`), skipping domains already in the account, then writes each new domain’s `_dmarcwatch` TXT through the provider and verifies it. Follow it with GET /dns-providers/imports/{id}. Each verification record is a DNS write: past the per-minute limit the import waits for the next minute. `{provider}` is a connection id or a kind (`powerdns`, `cloudflare`, `rfc2136`) with exactly one connection (400 on `provider` with several).',
        },
      },
    )
    .get(
      '/imports/:id',
      async ({ principal, params }) =>
        item(
          presentImport(
            (await imports.get(principal.accountId, params.id)) ?? notFound('DNS provider import'),
          ),
        ),
      {
        auth: true,
        params: idParams,
        response: { 200: 'DnsProviderImportItem', ...authErrors, 404: 'Error' },
        detail: { summary: 'An import’s progress and per-zone results' },
      },
    )
    .post(
      '/writes',
      async ({ principal, body, status }) => {
        const input = { accountId: principal.accountId, ...body }
        const planned = settle(await planWrite(useCases, input))
        if (!planned.ok) return status(502, planned.problem)
        const dryRun = body.dry_run === true
        const actor = { accountId: principal.accountId, actor: principal.actor, dryRun }
        const done = settle(
          await settlePlan(useCases, planned.value, { ...actor, reason: 'POST /dns-providers/writes' }),
        )
        if (!done.ok) return status(502, done.problem)
        const { write, plan } = done.value
        return item(write === null ? presentPlan(plan, dryRun) : presentWrite(write))
      },
      {
        auth: true,
        body: 'DnsProviderWriteRequest',
        parse: 'json',
        response: { 200: 'DnsProviderWriteItem', ...writeErrors, 502: 'DnsProviderError' },
        detail: {
          summary: 'Write a record set through the provider (or plan it)',
          description:
            'Replaces the set of one name and type in the connected zone holding the domain (the longest such zone). `dry_run: true` answers the diff against what the provider holds and writes nothing. Otherwise the set is written, read back from the provider and over DNS, and recorded (audit log): `status` `verified`, `applied` (not yet visible over DNS, see `error`) or `failed`. Verified domains only (403 `forbidden`); a DNS write (10/minute per account, 429 beyond; nothing to change is no write). 502 `dns_provider_error` when the provider fails (with `write_id` once a write was recorded).',
        },
      },
    )
    .get(
      '/writes',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        return list(await useCases.writes.list(principal.accountId, page), page, presentWrite)
      },
      {
        auth: true,
        query: t.Object(PaginationQuery),
        response: { 200: 'DnsProviderWriteList', ...authErrors },
        detail: { summary: 'The log of writes through providers', description: 'Newest first.' },
      },
    )
    .get(
      '/writes/:id',
      async ({ principal, params }) =>
        item(
          presentWrite(
            (await useCases.writes.get(principal.accountId, params.id)) ?? notFound('DNS provider write'),
          ),
        ),
      {
        auth: true,
        params: idParams,
        response: { 200: 'DnsProviderWriteItem', ...authErrors, 404: 'Error' },
        detail: { summary: 'One write through a provider' },
      },
    )
    .post(
      '/writes/:id/rollback',
      async ({ principal, params, status }) => {
        const input = { accountId: principal.accountId, id: params.id, actor: principal.actor }
        const result = settle(await rollbackWrite(useCases, input))
        if (!result.ok) return status(502, result.problem)
        return item(presentWrite(result.value))
      },
      {
        auth: true,
        params: idParams,
        response: { 200: 'DnsProviderWriteItem', ...writeErrors, 502: 'DnsProviderError' },
        detail: {
          summary: 'Roll a write back',
          description:
            'Restores the set the write replaced (deletes it when there was none), read back like a write, audited. Only while the provider still holds what the write put there (400 on `id` otherwise, and for writes never applied or already rolled back). A DNS write (429 beyond the limit).',
        },
      },
    )
}
