import { readdirSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

// A ROLE=worker process sharing its machine with the API (and PostgreSQL) lowers its own CPU
// priority, so the kernel runs the API's thread first whenever both want a core: on two cores the
// reads' p99 while a 100,000-record report digests went from 54-63 ms to 29-30 ms
// (docs/ingestion.md, "The worker at a lower priority"). A lower priority only matters when the
// CPU is contended: an idle machine's cores still go to the worker.
//
// On Linux the nice value belongs to each thread, not to the process (sched(7), "The nice value"):
// setpriority(PRIO_PROCESS, pid) changes only the thread with that id. So every thread that exists
// is lowered (/proc/self/task), and threads started later inherit the value of the thread that
// starts them. Elsewhere (macOS) the call with pid 0 covers the whole process.

export interface PriorityOutcome {
  /** The nice value now in force for this process's threads. */
  nice: number
  /** Threads whose value was set (1 where the system has no per-thread value). */
  threads: number
}

/**
 * Sets this process's nice value (0-19, higher is lower priority). Lowering needs no privilege;
 * a value below the current one needs CAP_SYS_NICE, and that failure is thrown to the caller.
 */
export function setProcessNice(nice: number): PriorityOutcome {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new RangeError(`nice must be 0-19, got ${nice}`)
  let tids: number[]
  try {
    tids = readdirSync('/proc/self/task').map(Number)
  } catch {
    setPriority(nice)
    return { nice: getPriority(), threads: 1 }
  }
  for (const tid of tids) {
    try {
      setPriority(tid, nice)
    } catch (error) {
      // A thread that exited between the listing and the call (ESRCH) needs nothing.
      if ((error as { code?: string }).code !== 'ESRCH') throw error
    }
  }
  return { nice: getPriority(), threads: tids.length }
}
