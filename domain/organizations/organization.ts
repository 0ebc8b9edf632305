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
}
