import type { Gate } from '../../domain/shared/concurrency-limit.ts'

// Heavy report work done in a short-lived process of its own, started by the service that shares
// its thread with the API (ROLE=all on PostgreSQL; docs/ingestion.md, "Large messages in a process
// of their own"): a large message's digestion, a large domain's report rules. The child runs the
// same job code on its own heap, at a lower CPU priority, and answers with one IPC message; its
// collections never stall the API's thread and the kernel gives the API's thread a core first.
// The child commits its own work, so a child that dies leaves its job to be retried.

/** What the child sends back over IPC: its task's result, or the error that ended it. */
export type ChildAnswer = { ok: true; result: unknown } | { ok: false; error: string }

/** What the parent sends the child first: the task and the settings it needs (no secrets). */
export interface ChildTask {
  task: unknown
  settings: unknown
}

export interface ReportProcessOptions {
  /** The child's entry module (src/report-process.ts). */
  entry: string
  /** The settings the child needs, sent with each task (plain JSON values). */
  settings: unknown
  /** Bounds the children at once (shared by every caller in the process). */
  gate: Gate
  /** A child that has not answered by then is killed and its job fails (and is retried). */
  timeoutMs: number
}

/** A child's answer and what it cost, as the kernel counted it. */
export interface ChildRun {
  result: unknown
  /** From the spawn to the exit. */
  ms: number
  /** The child's peak resident memory (getrusage ru_maxrss). */
  peakRssBytes: number
  /** The child's CPU time, user and system. */
  cpuMs: number
}

export class ReportProcessError extends Error {
  override name = 'ReportProcessError'
}

/**
 * Runs `entry <label>` in a child process with `task` and resolves with the result it sends back.
 * The label names the work in `ps` and in errors ("message <id>").
 */
export function reportProcesses(
  options: ReportProcessOptions,
): (label: string, task: unknown) => Promise<ChildRun> {
  return (label, task) => options.gate(() => runChild(options, label, task))
}

async function runChild(options: ReportProcessOptions, label: string, task: unknown): Promise<ChildRun> {
  const started = performance.now()
  let answer: ChildAnswer | null = null
  const child = Bun.spawn([process.execPath, options.entry, label], {
    // Its log lines go where this process's go; it reads nothing.
    stdio: ['ignore', 'inherit', 'inherit'],
    serialization: 'json',
    ipc(message) {
      // The first answer is the task's; a failure while the child closes its connections after it
      // changes nothing that was committed.
      answer ??= message as ChildAnswer
    },
  })
  child.send({ task, settings: options.settings } satisfies ChildTask)
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs)
  let code: number
  try {
    code = await child.exited
  } finally {
    clearTimeout(timer)
  }
  const got = answer as ChildAnswer | null
  if (got?.ok === true) {
    const usage = child.resourceUsage()
    return {
      result: got.result,
      ms: Math.round(performance.now() - started),
      peakRssBytes: usage?.maxRSS ?? 0,
      cpuMs: Math.round(Number(usage?.cpuTime.total ?? 0n) / 1000),
    }
  }
  const why =
    got?.ok === false
      ? got.error
      : child.signalCode !== null
        ? `killed by ${child.signalCode}`
        : `exited with code ${code} and no answer`
  throw new ReportProcessError(`the report process for ${label} failed: ${why}`)
}
