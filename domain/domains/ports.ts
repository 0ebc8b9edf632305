import type { Page, PageRequest } from '../shared/pagination.ts'
import type { AutomationLevel, Domain } from './domain.ts'

export interface DomainFilter {
  organizationId?: number
}

export interface NewDomain {
  name: string
  automationLevel: AutomationLevel
  organizationId: number | null
  verificationToken: string
}

export interface DomainPatch {
  automationLevel?: AutomationLevel
  organizationId?: number | null
}

/** Every method is scoped by account: a domain of another account is indistinguishable from none. */
export interface DomainStore {
  list(accountId: string, filter: DomainFilter, page: PageRequest): Promise<Page<Domain>>
  get(accountId: string, name: string): Promise<Domain | null>
  /** `duplicate` when the account already has the name. */
  insert(accountId: string, domain: NewDomain): Promise<Domain | 'duplicate'>
  update(accountId: string, name: string, patch: DomainPatch): Promise<Domain | null>
}

/** The narrow view of organizations that domain use cases need. */
export interface OrganizationLookup {
  exists(accountId: string, organizationId: number): Promise<boolean>
}
