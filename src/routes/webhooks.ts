import { Elysia } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { AuthDeps } from '../../plugins/auth.ts'

// Webhook settings, test ping, delivery log and redelivery (issue #6, contract §5): filled in next.

export interface WebhookRouteDeps {
  database: Database
  auth: AuthDeps
  now: () => Date
  random: RandomBytes
  secrets: SecretBox
  dns: DnsResolver
  allowPrivate: boolean
}

export function webhookRoutes(_deps: WebhookRouteDeps) {
  return new Elysia({ name: 'routes:webhooks', prefix: '/webhooks', detail: { tags: ['Webhooks'] } })
}
