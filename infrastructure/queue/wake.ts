import type { PgBoss } from 'pg-boss'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import type { QueueSpec } from './catalogue.ts'

// Waking this process's workers of a queue right after a job was committed, so they fetch it now
// instead of at their next poll (docs/ingestion.md, "Waking the local worker"; issue #20).
//
// What `boss.notifyWorker(id)` does (pg-boss 12, dist/worker.js and dist/manager.js): it marks the
// worker notified and cuts its poll delay short. A worker waiting out its delay fetches at once; a
// busy one (fetching, or running a batch) fetches again as soon as its batch is done instead of
// sleeping; one whose last batch came back full (`burstWhenBatchFull`) fetches again at once anyway,
// so the wake changes nothing for it. It reaches one worker: with `localConcurrency: N` pg-boss
// starts N workers and `work()` returns only the first one's id, so the ids are read from
// `getWipData()` and an idle one is chosen: a message must not wait behind the first worker's
// large report while the second sleeps. Workers of another process are never reached: they poll.

/**
 * A wake at most every this many ms: the first job after a quiet spell is fetched at once, and jobs
 * that follow it closely wait for one later wake together, so a steady stream is still fetched in
 * batches. Measured at 100 messages/s (docs/ingestion.md, "Waking the local worker"): a wake per
 * event-loop turn fetched one job at a time and took ~60% more CPU per report; 100 ms, batches of
 * ~8 and +10-20%; 250 ms, batches of 16-18 as with polling alone, the same CPU, half the wait.
 */
export const WAKE_GAP_MS = 250

/**
 * A wake for `queue`'s workers in this process: at once after a quiet spell, then at most one every
 * `gapMs` however many jobs were committed meanwhile (a burst wakes a worker once, and its fetch
 * takes them all). A wake never throws into the caller: its job is committed already and a poll
 * fetches it regardless.
 */
export function localWorkerWake(
  boss: PgBoss,
  queue: QueueSpec<object>,
  logger: Logger,
  gapMs = WAKE_GAP_MS,
): () => void {
  let scheduled = false
  let last = Number.NEGATIVE_INFINITY
  const wakeNow = () => {
    scheduled = false
    last = performance.now()
    try {
      const workers = boss.getWipData().filter((w) => w.name === queue.name && w.state === 'active')
      // An idle worker (no jobs in hand) fetches at once; it is enough, another one would only
      // fetch nothing. With all of them busy each is told to fetch again after its batch.
      const idle = workers.find((w) => w.count === 0)
      for (const worker of idle === undefined ? workers : [idle]) boss.notifyWorker(worker.id)
    } catch (error) {
      logger.warn('waking the local worker failed; the job waits for its poll', {
        queue: queue.name,
        ...errorFields(error),
      })
    }
  }
  return () => {
    if (scheduled) return
    scheduled = true
    // Never within the caller's turn: the jobs committed in this turn share the wake.
    const wait = last + gapMs - performance.now()
    if (wait > 0) setTimeout(wakeNow, wait)
    else setImmediate(wakeNow)
  }
}
