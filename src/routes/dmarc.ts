import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { ReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'
import type { AuthDeps } from '../../plugins/auth.ts'
import type { Config } from '../config.ts'

// Hosted DMARC records and policy progression (issues #5 and #6): filled in next.

export interface DmarcRouteDeps {
  database: Database
  reports: Pick<ReportReader, 'domainId'>
  auth: AuthDeps
  dns: DnsResolver
  now: () => Date
  counter: RateLimitCounter
  dnsWritesPerMinute: number
  spf: Config['spf']
}

export function dmarcRoutes(_deps: DmarcRouteDeps) {
  return new Elysia({ name: 'routes:dmarc', prefix: '/domains', detail: { tags: ['DMARC'] } })
}
