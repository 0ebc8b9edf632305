import type { Page, PageRequest } from '../shared/pagination.ts'

export interface Organization {
  id: number
  name: string
  domainCount: number
  createdAt: Date
}

/** Scoped by account in every method (tenant isolation lives in the store, not the route). */
export interface OrganizationStore {
  list(accountId: string, page: PageRequest): Promise<Page<Organization>>
  get(accountId: string, id: number): Promise<Organization | null>
  /** `duplicate` when the account already has an organization of that name (case-insensitive). */
  insert(accountId: string, name: string): Promise<Organization | 'duplicate'>
  /** null when the account has no such organization; `duplicate` as for `insert`. */
  rename(accountId: string, id: number, name: string): Promise<Organization | 'duplicate' | null>
  /**
   * Deletes the organization and, in the same transaction, takes its domains out of it (they stay
   * in the account, in no organization). The number of domains taken out, or null when the account
   * has no such organization.
   */
  delete(accountId: string, id: number): Promise<{ ungrouped: number } | null>
}
