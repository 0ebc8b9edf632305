import { type PageMeta, type PageRequest, pageMeta } from '../domain/shared/pagination.ts'

// docs/api.md "Errors": `{data}` for items, `{data, meta}` for lists.

export const item = <T>(data: T): { data: T } => ({ data })

export function list<T, J>(
  page: { items: T[]; total: number },
  request: PageRequest,
  present: (value: T) => J,
): { data: J[]; meta: PageMeta } {
  return { data: page.items.map(present), meta: pageMeta(page.total, request) }
}

export function pageRequest(query: { page?: number; per_page?: number }): PageRequest {
  return { page: query.page ?? 1, perPage: query.per_page ?? 25 }
}
