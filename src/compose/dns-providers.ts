import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ProviderDeps } from '../../domain/dns-providers/imports.ts'
import { watchReads } from '../../domain/dns-providers/read-health.ts'
import type { WriteDeps } from '../../domain/dns-providers/writes.ts'
import { dnsWriteGate } from '../../domain/rate-limits/dns-writes.ts'
import type { RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { providerOpener, providerRegistry } from '../../infrastructure/dns-providers/registry.ts'
import { pgConnectionStore, pgImportStore } from '../../infrastructure/repositories/pg-dns-provider-store.ts'
import { pgWriteStore } from '../../infrastructure/repositories/pg-dns-provider-writes.ts'
import { pgDomainStore } from '../../infrastructure/repositories/pg-domain-store.ts'
import { pgOrganizationStore } from '../../infrastructure/repositories/pg-organization-store.ts'
import { pgProviderReadHealth } from '../../infrastructure/repositories/pg-provider-read-health.ts'
import { pgRateLimitCounter } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import type { Runtime } from '../compose.ts'

// The DNS provider use cases' deps (domain/dns-providers/imports.ts, ProviderDeps), built once per
// process by the composition root (src/compose.ts, src/worker.ts) and handed to the API routes, the
// dashboard and the import job, which never build them.

/** What the DNS provider use cases need, built once per process (the API and the worker alike). */
export interface ProviderWiring {
  database: Database
  secrets: SecretBox
  dns: DnsResolver
  verificationDns?: DnsResolver
  allowPrivate: boolean
  now: () => Date
  counter?: RateLimitCounter
  dnsWritesPerMinute?: number
  /** DNS read-back after a write: attempts × interval (default 20 × 250 ms). */
  readBack?: WriteDeps['readBack']
  /** The job queue: an import enqueues its job with its row (null where no queue runs). */
  boss: PgBoss | null
}

export function dnsProviderDeps(wiring: ProviderWiring): ProviderDeps {
  const db = wiring.database.db
  const connections = pgConnectionStore(db, { secrets: wiring.secrets })
  const registry = providerRegistry({ dns: wiring.dns, allowPrivate: wiring.allowPrivate })
  const counter = wiring.counter ?? pgRateLimitCounter(wiring.database.countersDb)
  return {
    connections,
    imports: pgImportStore(db, { boss: wiring.boss }),
    build: registry.build,
    // Every read through a connection is reported: a failing one raises dns_provider_read_failing.
    open: watchReads(
      providerOpener(registry, connections.secretOf),
      pgProviderReadHealth(db, wiring.boss),
      wiring.now,
    ),
    writes: pgWriteStore(db),
    domains: pgDomainStore(db),
    organizations: pgOrganizationStore(db),
    dns: wiring.verificationDns ?? wiring.dns,
    now: wiring.now,
    wait: (ms: number) => Bun.sleep(ms),
    readBack: wiring.readBack ?? { attempts: 20, intervalMs: 250 },
    /** One DNS write against the account's limit, shared with SPF management (scope `dns_writes`). */
    dnsWrites: dnsWriteGate({ counter, perMinute: wiring.dnsWritesPerMinute ?? 10, now: wiring.now }),
  }
}

/** The DNS provider use cases' deps, for the API, the dashboard and the import job alike. */
export function providerDeps(
  runtime: Pick<Runtime, 'config' | 'database' | 'secrets' | 'dns' | 'verificationDns' | 'now' | 'boss'>,
  counter: RateLimitCounter,
): ProviderDeps {
  const { config } = runtime
  return dnsProviderDeps({
    database: runtime.database,
    secrets: runtime.secrets,
    dns: runtime.dns,
    verificationDns: runtime.verificationDns,
    allowPrivate: config.webhookAllowPrivate,
    now: runtime.now,
    counter,
    dnsWritesPerMinute: config.rateLimits.dnsWritesPerMinute,
    boss: runtime.boss,
  })
}
