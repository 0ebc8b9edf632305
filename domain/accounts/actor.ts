// Who a change is recorded as in audit trails and version histories (docs/api.md: `actor` is
// `user:<id>`, or `system` for the background jobs). Set once on the API principal and the
// dashboard session, so every route and page records the same form.

export const userActor = (userId: string): string => `user:${userId}`
