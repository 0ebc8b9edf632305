import { Elysia } from 'elysia'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { Logger } from '../../infrastructure/logging/json-logger.ts'
import type { Config } from '../config.ts'

// The server-rendered dashboard at the origin's root (issue #8, contract §7): filled in next.

export interface DashboardDeps {
  config: Config
  database: Database
  logger: Logger
  now: () => Date
  random: RandomBytes
  counter: RateLimitCounter
}

export function dashboardRoutes(_deps: DashboardDeps) {
  return new Elysia({ name: 'dashboard' })
}
