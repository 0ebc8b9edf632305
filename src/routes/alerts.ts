import { Elysia } from 'elysia'
import type { Database } from '../../infrastructure/db/database.ts'
import type { AuthDeps } from '../../plugins/auth.ts'

// Alerts API (issue #6, contract §4): filled in next.

export interface AlertRouteDeps {
  database: Database
  auth: AuthDeps
  now: () => Date
}

export function alertRoutes(_deps: AlertRouteDeps) {
  return new Elysia({ name: 'routes:alerts', detail: { tags: ['Alerts'] } })
}
