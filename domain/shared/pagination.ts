// docs/api.md "Errors": 1-based pages, default 25 per page, max 100; a page past the end is an empty page.

export const DEFAULT_PER_PAGE = 25
export const MAX_PER_PAGE = 100

export interface PageRequest {
  page: number
  perPage: number
}

export interface Page<T> {
  items: T[]
  total: number
}

export interface PageMeta {
  total: number
  page: number
  per_page: number
  last_page: number
}

export function pageMeta(total: number, { page, perPage }: PageRequest): PageMeta {
  return { total, page, per_page: perPage, last_page: Math.max(1, Math.ceil(total / perPage)) }
}

export function offsetOf({ page, perPage }: PageRequest): number {
  return (page - 1) * perPage
}
