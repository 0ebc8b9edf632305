import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { ReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'
import type { AuthDeps } from '../../plugins/auth.ts'

// Sending sources of a domain, recommendations and simulations (issue #5). Filled in next.

export interface SourceRouteDeps {
  database: Database
  reports: Pick<ReportReader, 'domainId'>
  auth: AuthDeps
  dns: DnsResolver
  now: () => Date
}

export function sourceRoutes(_deps: SourceRouteDeps) {
  return new Elysia({ name: 'routes:sources', prefix: '/domains', detail: { tags: ['Sources'] } })
}
