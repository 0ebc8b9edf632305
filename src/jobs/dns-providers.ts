import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { runImport } from '../../domain/dns-providers/imports.ts'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { IMPORT_DOMAINS, send } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'
import { pgImportStore } from '../../infrastructure/repositories/pg-dns-provider-store.ts'
import { pgDomainVerifications } from '../../infrastructure/repositories/pg-domain-verification.ts'
import { dnsProviderDeps } from '../wiring/dns-providers.ts'

// Domain imports from DNS providers (issue #7; docs/dns-providers.md "Connections, import and
// writes"). One job per import (singleton per import id, so two runs of one import never overlap);
// it handles zone by zone and saves each zone's result, so a retried job resumes. Each imported
// domain costs one DNS write (its verification record) against the account's limit (contract §3);
// when the limit is reached the job sends itself again for when the window resets, and stops.

export interface DnsProviderJobDeps {
  database: Database
  logger: Logger
  now: () => Date
  secrets: SecretBox
  dns: DnsResolver
  allowPrivate: boolean
  /**
   * Uncached DNS for read-backs and ownership verification (runtime.verificationDns). Without it
   * `dns` is used, whose cache may answer a read-back with what it saw before the write.
   */
  verificationDns?: DnsResolver
  /** RATE_LIMIT_DNS_WRITES_PER_MINUTE (default 10). */
  dnsWritesPerMinute?: number
  random?: RandomBytes
}

const systemRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length))

export function dnsProviderJobs(boss: PgBoss, deps: DnsProviderJobDeps): JobHandler[] {
  const imports = pgImportStore(deps.database.db, { boss })
  const useCases = {
    ...dnsProviderDeps(deps),
    imports,
    verifications: pgDomainVerifications(deps.database.db, boss),
    random: deps.random ?? systemRandom,
  }
  const importDomains = handle(IMPORT_DOMAINS, async ([job]) => {
    if (job === undefined) return
    const { importId } = job.data
    try {
      const run = await runImport(useCases, importId)
      if (run.kind === 'paused') {
        deps.logger.info('domain import paused by the DNS write limit', {
          import: importId,
          retry_after: run.retryAfter,
        })
        await send(boss, IMPORT_DOMAINS, job.data, { singletonKey: importId, startAfter: run.retryAfter })
      }
    } catch (error) {
      // Our own trouble (database): pg-boss retries, and the import resumes after the zones already
      // done; after the last retry it is marked failed rather than left running for ever.
      deps.logger.error('domain import failed', { import: importId, ...errorFields(error) })
      if (job.retryCount >= (IMPORT_DOMAINS.options.retryLimit ?? 0))
        await imports
          .finish(importId, 'failed', 'internal error; start the import again', deps.now())
          .catch(() => {})
      throw error
    }
  })
  return [importDomains]
}
