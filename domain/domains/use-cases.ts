import { isDemoDomain } from '../demo/demo-world.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import type { RandomBytes } from '../shared/random.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { findAccountDomain } from './account-domain.ts'
import type { AutomationLevel, Domain } from './domain.ts'
import { newVerificationToken, normalizeSelectors } from './domain.ts'
import { normalizeDomainName } from './domain-name.ts'
import type { DomainFilter, DomainPatch, DomainStore, OrganizationLookup } from './ports.ts'

export interface DomainDeps {
  domains: DomainStore
  organizations: OrganizationLookup
}

export interface AddDomainInput {
  accountId: string
  domainName: string
  automationLevel?: AutomationLevel
  organizationId?: number | null
  dkimSelectors?: string[]
}

/** Checked before the write, and again by the write itself when the organization was deleted meanwhile. */
const noOrganization = () =>
  invalid('organization_id', 'No organization with this id exists in your account.')

export async function addDomain(
  deps: DomainDeps & { random: RandomBytes },
  input: AddDomainInput,
): Promise<Result<Domain>> {
  const checked = normalizeDomainName(input.domainName)
  if (!checked.ok) return invalid('domain_name', checked.reason)
  // The demo's name is the demo's (docs/demo.md): added only by `bun run cli demo`, never by hand.
  if (isDemoDomain(checked.name))
    return invalid(
      'domain_name',
      `${checked.name} is reserved for the demo: run bun run cli demo --email <you> to add it.`,
    )
  const selectors = normalizeSelectors(input.dkimSelectors ?? [])
  if (!selectors.ok) return invalid('dkim_selectors', selectors.reason)
  const organizationId = input.organizationId ?? null
  if (organizationId !== null && !(await deps.organizations.exists(input.accountId, organizationId))) {
    return noOrganization()
  }
  const created = await deps.domains.insert(input.accountId, {
    name: checked.name,
    automationLevel: input.automationLevel ?? 'manual',
    organizationId,
    verificationToken: newVerificationToken(deps.random),
    dkimSelectors: selectors.selectors,
  })
  if (created === 'duplicate')
    return invalid('domain_name', `The domain ${checked.name} is already in your account.`)
  if (created === 'no_organization') return noOrganization()
  return ok(created)
}

/** The account's domain named in the path (domain/domains/account-domain.ts). */
export const getDomain = (deps: Pick<DomainDeps, 'domains'>, accountId: string, name: string) =>
  findAccountDomain((normalized) => deps.domains.get(accountId, normalized), name)

export function listDomains(
  deps: Pick<DomainDeps, 'domains'>,
  accountId: string,
  filter: DomainFilter,
  page: PageRequest,
): Promise<Page<Domain>> {
  return deps.domains.list(accountId, filter, page)
}

export async function updateDomain(
  deps: DomainDeps,
  input: { accountId: string; name: string; patch: DomainPatch },
): Promise<Result<Domain>> {
  const found = await getDomain(deps, input.accountId, input.name)
  if (!found.ok) return found
  const { organizationId } = input.patch
  let patch = input.patch
  if (patch.dkimSelectors !== undefined) {
    const selectors = normalizeSelectors(patch.dkimSelectors)
    if (!selectors.ok) return invalid('dkim_selectors', selectors.reason)
    patch = { ...patch, dkimSelectors: selectors.selectors }
  }
  if (
    organizationId !== undefined &&
    organizationId !== null &&
    !(await deps.organizations.exists(input.accountId, organizationId))
  ) {
    return noOrganization()
  }
  const updated = await deps.domains.update(input.accountId, found.value.name, patch)
  if (updated === 'no_organization') return noOrganization()
  return updated === null ? fail({ code: 'domain_not_found' }) : ok(updated)
}
