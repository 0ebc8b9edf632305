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
 * A wake for `queue`'s workers in this process: at most one per event-loop turn, however many jobs
 * were committed in that turn (a burst wakes a worker once, and its fetch takes them all). A wake
 * never throws into the caller: its job is committed already and a poll fetches it regardless.
 */
export function localWorkerWake(boss: PgBoss, queue: QueueSpec<object>, logger: Logger): () => void {
  let pending = false
  const wakeNow = () => {
    pending = false
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
    if (pending) return
    pending = true
    setImmediate(wakeNow)
  }
}
