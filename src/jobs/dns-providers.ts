import type { PgBoss } from 'pg-boss'
import type { ProviderDeps } from '../../domain/dns-providers/imports.ts'
import { type ImportDeps, runImport } from '../../domain/dns-providers/imports.ts'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import { IMPORT_DOMAINS, send } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

// Domain imports from DNS providers (issue #7; docs/dns-providers.md "Connections, import and
// writes"). One job per import (singleton per import id, so two runs of one import never overlap);
// it handles zone by zone and saves each zone's result, so a retried job resumes. Each imported
// domain costs one DNS write (its verification record) against the account's limit (docs/api.md "Authentication and limits");
// when the limit is reached the job sends itself again for when the window resets, and stops.

export interface DnsProviderJobDeps {
  /** The DNS provider use cases' deps (src/compose/dns-providers.ts), with the worker's queue. */
  providers: ProviderDeps
  /** Ownership verification of the imported domains, re-queueing reports that waited. */
  verifications: ImportDeps['verifications']
  logger: Logger
  now: () => Date
  random?: RandomBytes
}

const systemRandom: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length))

export function dnsProviderJobs(boss: PgBoss, deps: DnsProviderJobDeps): JobHandler[] {
  const { imports } = deps.providers
  const useCases: ImportDeps = {
    ...deps.providers,
    verifications: deps.verifications,
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
