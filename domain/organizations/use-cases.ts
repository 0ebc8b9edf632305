import type { Domain } from '../domains/domain.ts'
import type { DomainStore } from '../domains/ports.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import type { Organization, OrganizationStore } from './organization.ts'

export const MAX_ORGANIZATION_NAME = 200

export async function createOrganization(
  deps: { organizations: OrganizationStore },
  input: { accountId: string; name: string },
): Promise<Result<Organization>> {
  // Collapse inner runs of white space so "Acme  Corp" and "Acme Corp" are one name.
  const name = input.name.trim().replace(/\s+/g, ' ')
  if (name === '') return invalid('name', 'The organization name is required.')
  if (name.length > MAX_ORGANIZATION_NAME) {
    return invalid('name', `The organization name may be at most ${MAX_ORGANIZATION_NAME} characters.`)
  }
  const created = await deps.organizations.insert(input.accountId, name)
  if (created === 'duplicate') return invalid('name', `An organization named "${name}" already exists.`)
  return ok(created)
}

export async function getOrganization(
  deps: { organizations: OrganizationStore },
  accountId: string,
  id: number,
): Promise<Result<Organization>> {
  const found = await deps.organizations.get(accountId, id)
  return found === null ? fail({ code: 'not_found', resource: 'organization' }) : ok(found)
}

export async function listOrganizationDomains(
  deps: { organizations: OrganizationStore; domains: DomainStore },
  input: { accountId: string; organizationId: number; page: PageRequest },
): Promise<Result<Page<Domain>>> {
  const found = await getOrganization(deps, input.accountId, input.organizationId)
  if (!found.ok) return found
  return ok(await deps.domains.list(input.accountId, { organizationId: found.value.id }, input.page))
}
