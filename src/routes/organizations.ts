import { Elysia, t } from 'elysia'
import type { DomainStore } from '../../domain/domains/ports.ts'
import type { Organization, OrganizationStore } from '../../domain/organizations/organization.ts'
import {
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizationDomains,
  MAX_ORGANIZATION_NAME,
  renameOrganization,
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

/** Organizations ids are PostgreSQL `integer`s: a larger id is refused (400), never sent to the database. */
const GroupParams = t.Object({ group: Int4Id({ description: 'Organization id' }) })

const NameBody = t.Object({
  name: Line({
    maxLength: MAX_ORGANIZATION_NAME,
    description: `Trimmed, inner white space collapsed; 1 to ${MAX_ORGANIZATION_NAME} characters, no control characters; unique per account, ignoring case`,
    examples: ['Acme Retail'],
  }),
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
      OrganizationCreate: NameBody,
      OrganizationRename: NameBody,
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
      '/:group',
      async ({ principal, params }) =>
        item(present(unwrap(await getOrganization(deps, principal.accountId, params.group)))),
      {
        auth: true,
        params: GroupParams,
        response: { 200: 'OrganizationItem', ...authErrors, 404: 'Error' },
        detail: { summary: 'One organization, with its domain count' },
      },
    )
    .patch(
      '/:group',
      async ({ principal, params, body }) => {
        const renamed = unwrap(
          await renameOrganization(deps, {
            accountId: principal.accountId,
            id: params.group,
            name: body.name,
          }),
        )
        return item(present(renamed))
      },
      {
        auth: true,
        params: GroupParams,
        body: 'OrganizationRename',
        parse: 'json',
        response: { 200: 'OrganizationItem', ...authErrors, 404: 'Error' },
        detail: {
          summary: 'Rename an organization',
          description:
            'The name follows the rules of creation; another organization of the account with that name (ignoring case) is a 400 on `name`. Changing only the case of its own name is allowed.',
        },
      },
    )
    .delete(
      '/:group',
      async ({ principal, params, status }) => {
        unwrap(await deleteOrganization(deps, { accountId: principal.accountId, id: params.group }))
        return status(204, undefined)
      },
      {
        auth: true,
        params: GroupParams,
        response: { 204: t.Void(), ...authErrors, 404: 'Error' },
        detail: {
          summary: 'Delete an organization',
          description:
            'Its domains stay in the account, in no organization (`organization_id` null), in the same transaction.',
        },
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
        params: GroupParams,
        query: t.Object(PaginationQuery),
        response: { 200: 'OrganizationDomainList', ...authErrors, 404: 'Error' },
        detail: { summary: 'Domains in the organization' },
      },
    )
}
