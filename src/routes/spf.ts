import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { ReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'
import type { AuthDeps } from '../../plugins/auth.ts'
import type { Config } from '../config.ts'

// SPF management of a domain (issue #5). Filled in next.

export interface SpfRouteDeps {
  database: Database
  reports: Pick<ReportReader, 'domainId'>
  auth: AuthDeps
  dns: DnsResolver
  now: () => Date
  counter: RateLimitCounter
  dnsWritesPerMinute: number
  spf: Config['spf']
}

export function spfRoutes(_deps: SpfRouteDeps) {
  return new Elysia({ name: 'routes:spf', prefix: '/domains', detail: { tags: ['SPF'] } })
}
