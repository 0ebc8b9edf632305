import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { AuthDeps } from '../../plugins/auth.ts'

// DNS provider connections, domain import and provider writes (issue #7): filled in next.

export interface DnsProviderRouteDeps {
  database: Database
  auth: AuthDeps
  now: () => Date
  random: RandomBytes
  secrets: SecretBox
  dns: DnsResolver
  counter: RateLimitCounter
  dnsWritesPerMinute: number
  allowPrivate: boolean
}

export function dnsProviderRoutes(_deps: DnsProviderRouteDeps) {
  return new Elysia({
    name: 'routes:dns-providers',
    prefix: '/dns-providers',
    detail: { tags: ['DNS providers'] },
  })
}
