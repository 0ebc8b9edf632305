import type { DnsResolver } from '../../domain/dns/ports.ts'
import { dnsWriteGate } from '../../domain/rate-limits/dns-writes.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { SourceDeps } from '../../domain/spf-management/source-use-cases.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { pgSpfSourceActivity } from '../../infrastructure/repositories/pg-spf-source-activity.ts'
import { pgSpfStore } from '../../infrastructure/repositories/pg-spf-store.ts'
import type { Config } from '../config.ts'

// The SPF management use cases' deps, built once per process by the API routes and the dashboard
// alike, so both write through the same store, DNS and DNS-write budget.

export interface SpfDepsInput {
  database: Database
  dns: DnsResolver
  now: () => Date
  counter: RateLimitCounter
  dnsWritesPerMinute: number
  spf: Config['spf']
}

export function spfUseCaseDeps(deps: SpfDepsInput): SourceDeps {
  return {
    store: pgSpfStore(deps.database.db, { zone: deps.spf.zone }),
    dns: deps.dns,
    now: deps.now,
    zone: deps.spf.zone,
    activity: pgSpfSourceActivity(deps.database.db),
    dnsWrites: dnsWriteGate({ counter: deps.counter, perMinute: deps.dnsWritesPerMinute, now: deps.now }),
  }
}
