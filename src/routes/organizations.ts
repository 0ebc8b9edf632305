import { Elysia, t } from 'elysia'
import type { DomainStore } from '../../domain/domains/ports.ts'
import type { Organization, OrganizationStore } from '../../domain/organizations/organization.ts'
import {
  createOrganization,
  listOrganizationDomains,
  MAX_ORGANIZATION_NAME,
} from '../../domain/organizations/use-cases.ts'
import { apiModels, authErrors, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { Int4Id, Line } from '../../plugins/input-schemas.ts'
import { DomainModel, presentDomain } from './domains.ts'

const OrganizationModel = t.Object({
  id: t.Integer(),
  name: t.String({ examples: ['Acme Retail'] }),
  domain_count: t.Integer(),
  created_at: t.String({ format: 'date-time' }),
})

const present = (organization: Organization) => ({
  id: organization.id,
  name: organization.name,
  domain_count: organization.domainCount,
  created_at: organization.createdAt.toISOString(),
})

export function organizationRoutes(deps: {
  organizations: OrganizationStore
  domains: DomainStore
  auth: AuthDeps
}) {
  return new Elysia({
    name: 'routes:organizations',
    prefix: '/organizations',
    detail: { tags: ['Organizations'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      Organization: OrganizationModel,
      OrganizationItem: t.Object({ data: OrganizationModel }),
      OrganizationList: t.Object({ data: t.Array(OrganizationModel), meta: PageMeta }),
      OrganizationCreate: t.Object({
        name: Line({ maxLength: MAX_ORGANIZATION_NAME, examples: ['Acme Retail'] }),
      }),
      OrganizationDomainList: t.Object({ data: t.Array(DomainModel), meta: PageMeta }),
    })
    .get(
      '',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        return list(await deps.organizations.list(principal.accountId, page), page, present)
      },
      {
        auth: true,
        query: t.Object(PaginationQuery),
        response: { 200: 'OrganizationList', ...authErrors },
        detail: { summary: 'List organizations (groups of domains)' },
      },
    )
    .post(
      '',
      async ({ principal, body, status }) => {
        const created = unwrap(
          await createOrganization(deps, { accountId: principal.accountId, name: body.name }),
        )
        return status(201, item(present(created)))
      },
      {
        auth: true,
        body: 'OrganizationCreate',
        parse: 'json',
        response: { 201: 'OrganizationItem', ...authErrors },
        detail: { summary: 'Create an organization; names are unique per account, ignoring case' },
      },
    )
    .get(
      '/:group/domains',
      async ({ principal, params, query }) => {
        const page = pageRequest(query)
        const found = unwrap(
          await listOrganizationDomains(deps, {
            accountId: principal.accountId,
            organizationId: params.group,
            page,
          }),
        )
        return list(found, page, presentDomain)
      },
      {
        auth: true,
        params: t.Object({ group: Int4Id({ description: 'Organization id' }) }),
        query: t.Object(PaginationQuery),
        response: { 200: 'OrganizationDomainList', ...authErrors, 404: 'Error' },
        detail: { summary: 'Domains in the organization' },
      },
    )
}
