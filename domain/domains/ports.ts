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
  dkimSelectors: string[]
}

export interface DomainPatch {
  automationLevel?: AutomationLevel
  organizationId?: number | null
  dkimSelectors?: string[]
}

export interface DomainRef {
  accountId: string
  name: string
}

/** Every method is scoped by account: a domain of another account is indistinguishable from none. */
export interface DomainStore {
  list(accountId: string, filter: DomainFilter, page: PageRequest): Promise<Page<Domain>>
  get(accountId: string, name: string): Promise<Domain | null>
  /**
   * `duplicate` when the account already has the name; `no_organization` when the organization
   * was deleted between the use case's check and the write (docs/api.md, Organizations).
   */
  insert(accountId: string, domain: NewDomain): Promise<Domain | 'duplicate' | 'no_organization'>
  update(accountId: string, name: string, patch: DomainPatch): Promise<Domain | 'no_organization' | null>
  /** Unverified domains added since `since`, oldest check first, across accounts (for the worker). */
  unverified(since: Date, limit: number): Promise<DomainRef[]>
}

/** The narrow view of organizations that domain use cases need. */
export interface OrganizationLookup {
  exists(accountId: string, organizationId: number): Promise<boolean>
}
