import type { Job, PgBoss, WorkHandler, WorkOptions } from 'pg-boss'
import type { QueueSpec } from './catalogue.ts'

// What a worker process registers: one handler per queue of the catalogue (catalogue.ts). Each
// module in src/jobs/ returns its handlers as a list and src/worker.ts registers them all at once,
// so the queues a process works on are one list, and a queue's timing lives in the catalogue.

export interface JobHandler<Payload extends object = object> {
  readonly queue: QueueSpec<Payload>
  /** How this process fetches the queue's jobs (batch size, concurrency, polling). */
  readonly work?: WorkOptions
  /** Also one job at start, besides the cron (partitions: an install down over a month boundary). */
  readonly atStart?: boolean
  // A method, so that a list of handlers of different payloads is a list of JobHandler.
  handler(jobs: Job<Payload>[]): Promise<void>
}

/** A handler for a queue, its jobs typed by the queue's payload. */
export function handle<Payload extends object>(
  queue: QueueSpec<Payload>,
  ...args:
    | [handler: JobHandler<Payload>['handler']]
    | [work: WorkOptions & { atStart?: boolean }, handler: JobHandler<Payload>['handler']]
): JobHandler<Payload> {
  if (args.length === 1) return { queue, handler: args[0] }
  const [{ atStart, ...work }, handler] = args
  return { queue, work, handler, ...(atStart ? { atStart } : {}) }
}

/**
 * Schedules the cron queues, starts a worker per handler and sends the start-up jobs. Returns each
 * queue's worker id (for `boss.notifyWorker`).
 */
export async function registerJobs(
  boss: PgBoss,
  handlers: readonly JobHandler[],
): Promise<Map<string, string>> {
  const workers = new Map<string, string>()
  for (const { queue, work, atStart, handler } of handlers) {
    if (queue.cron !== undefined) await boss.schedule(queue.name, queue.cron)
    const run = handler as WorkHandler<object>
    workers.set(
      queue.name,
      work === undefined ? await boss.work(queue.name, run) : await boss.work(queue.name, work, run),
    )
    if (atStart) await boss.send(queue.name, {})
  }
  return workers
}
