import type { Logger } from '../../domain/shared/logger.ts'
import type { SpfRetryOutcome } from '../../domain/spf-management/provider-retry.ts'
import { REFLATTEN_SPF, SPF_PROVIDER_RETRY, type SpfRetryJob } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

const BATCH = 50

export class SpfWriteFailed extends Error {}

/**
 * Flattened managed records hold the providers' networks as they were when planned; providers
 * change them. Hourly, every record planned more than SPF_REFLATTEN_HOURS ago is planned again,
 * and served anew only when the result changed (a new version, actor `system`).
 */
export function spfJobs(deps: {
  /** Re-plans up to `limit` records planned more than `olderThanHours` ago; how many it saw. */
  reflatten(input: { olderThanHours: number; limit: number }): Promise<number>
  logger: Logger
  reflattenHours: number
  /**
   * One retry of a failed SPF write through a DNS provider (domain/spf-management/provider-retry.ts);
   * absent where no provider deps are wired.
   */
  retryWrite?: (job: SpfRetryJob & { final: boolean }) => Promise<SpfRetryOutcome>
}): JobHandler[] {
  const { retryWrite } = deps
  return [
    // A failed SPF write through a DNS provider: the previous record is in place; a failure again
    // throws, so pg-boss retries with the queue's backoff; the last attempt gives the write up.
    ...(retryWrite === undefined
      ? []
      : [
          handle(SPF_PROVIDER_RETRY, async (jobs) => {
            for (const job of jobs) {
              const final = job.retryCount >= (SPF_PROVIDER_RETRY.options.retryLimit ?? 0)
              const result = await retryWrite({ ...job.data, final })
              const fields = { domain: job.data.domain, retry: job.data.proposalId, outcome: result.outcome }
              if (result.outcome === 'failed') {
                deps.logger.warn('SPF write through the DNS provider failed again', {
                  ...fields,
                  error: result.error,
                })
                throw new SpfWriteFailed(`${job.data.domain}: ${result.error}`)
              }
              if (result.outcome === 'abandoned')
                deps.logger.warn('SPF write through the DNS provider given up', {
                  ...fields,
                  error: result.error,
                })
              else deps.logger.info('SPF write through the DNS provider retried', fields)
            }
          }),
        ]),
    handle(REFLATTEN_SPF, async () => {
      let total = 0
      while (true) {
        const seen = await deps.reflatten({ olderThanHours: deps.reflattenHours, limit: BATCH })
        total += seen
        if (seen < BATCH) break
      }
      if (total > 0) deps.logger.info('managed SPF records re-planned', { count: total })
    }),
  ]
}
