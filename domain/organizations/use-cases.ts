import type { Domain } from '../domains/domain.ts'
import type { DomainStore } from '../domains/ports.ts'
import { BIDI_CONTROLS, BIDI_CONTROLS_TEXT, showsSomething } from '../shared/control-characters.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import type { Organization, OrganizationStore } from './organization.ts'

export const MAX_ORGANIZATION_NAME = 200

// C0 controls, DEL and C1 controls: invisible in a list, and a newline would break a log line or a
// CSV export. Checked before white space is collapsed, so a tab is refused rather than made a space.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const notFound = <T>() => fail<T>({ code: 'not_found', resource: 'organization' })

/** The rules of an organization name (docs/api.md, Organizations), shared by create and rename. */
export function normalizeOrganizationName(raw: string): Result<string> {
  if (CONTROL.test(raw)) return invalid('name', 'The organization name must not contain control characters.')
  // The dashboard's form reaches here without the API schema's single-line rule (SINGLE_LINE).
  if (BIDI_CONTROLS.test(raw))
    return invalid('name', `The organization name must not contain ${BIDI_CONTROLS_TEXT}.`)
  // NFC, so that "Café" typed with a composed é and with e + U+0301 is one name to the uniqueness
  // index (it compares code points); then collapse inner runs of white space so "Acme  Corp" and
  // "Acme Corp" are one name too.
  const name = raw.normalize('NFC').trim().replace(/\s+/g, ' ')
  // A name of zero-width characters alone would be an invisible entry in every list.
  if (!showsSomething(name)) return invalid('name', 'The organization name is required.')
  if (name.length > MAX_ORGANIZATION_NAME) {
    return invalid('name', `The organization name may be at most ${MAX_ORGANIZATION_NAME} characters.`)
  }
  return ok(name)
}

const duplicate = (name: string) => invalid('name', `An organization named "${name}" already exists.`)

export async function createOrganization(
  deps: { organizations: OrganizationStore },
  input: { accountId: string; name: string },
): Promise<Result<Organization>> {
  const name = normalizeOrganizationName(input.name)
  if (!name.ok) return name
  const created = await deps.organizations.insert(input.accountId, name.value)
  if (created === 'duplicate') return duplicate(name.value)
  return ok(created)
}

/**
 * A new name under the rules of creation. Renaming to the same name, or changing only its case, is
 * allowed (the uniqueness index ignores the organization itself).
 */
export async function renameOrganization(
  deps: { organizations: OrganizationStore },
  input: { accountId: string; id: number; name: string },
): Promise<Result<Organization>> {
  const name = normalizeOrganizationName(input.name)
  if (!name.ok) {
    // Another account's organization answers as a missing one, whatever the name (no enumeration).
    return (await deps.organizations.get(input.accountId, input.id)) === null ? notFound() : name
  }
  const renamed = await deps.organizations.rename(input.accountId, input.id, name.value)
  if (renamed === null) return notFound()
  if (renamed === 'duplicate') return duplicate(name.value)
  return ok(renamed)
}

/** Deletes the organization; its domains stay in the account, in no organization. */
export async function deleteOrganization(
  deps: { organizations: OrganizationStore },
  input: { accountId: string; id: number },
): Promise<Result<{ ungrouped: number }>> {
  const deleted = await deps.organizations.delete(input.accountId, input.id)
  return deleted === null ? notFound() : ok(deleted)
}

export async function getOrganization(
  deps: { organizations: OrganizationStore },
  accountId: string,
  id: number,
): Promise<Result<Organization>> {
  const found = await deps.organizations.get(accountId, id)
  return found === null ? notFound() : ok(found)
}

export async function listOrganizationDomains(
  deps: { organizations: OrganizationStore; domains: DomainStore },
  input: { accountId: string; organizationId: number; page: PageRequest },
): Promise<Result<Page<Domain>>> {
  const found = await getOrganization(deps, input.accountId, input.organizationId)
  if (!found.ok) return found
  return ok(await deps.domains.list(input.accountId, { organizationId: found.value.id }, input.page))
}
