import type { Subprocess } from 'bun'
import type { Gate } from '../../domain/shared/concurrency-limit.ts'

// Heavy report work done in a short-lived process of its own, started by the service that shares
// its thread with the API (ROLE=all on PostgreSQL; docs/ingestion.md, "Large messages in a process
// of their own"): a large message's digestion, a large domain's report rules. The child runs the
// same job code on its own heap, at a lower CPU priority, and answers with one IPC message; its
// collections never stall the API's thread and the kernel gives the API's thread a core first.
// The child commits its own work, so a child that dies leaves its job to be retried.

/** What the child sends back over IPC: its task's result, or the error that ended it. */
export type ChildAnswer =
  | {
      ok: true
      result: unknown
      /** RSS when the task began (code loaded, connected). */
      rssAtTaskBytes?: number
      /** Its peak RSS once the task was done (its own VmHWM). */
      peakRssBytes?: number
    }
  | { ok: false; error: string }

/** What the parent sends a child: first its settings (no secrets), then, once, its task. */
export type ChildMessage = { settings: unknown } | { label: string; task: unknown }

export interface ReportProcessOptions {
  /** The child's entry module (src/report-process.ts). */
  entry: string
  /** The settings the child needs (plain JSON values). */
  settings: unknown
  /** Bounds the children working at once (shared by every caller in the process). */
  gate: Gate
}

/** A child's answer and what it cost, as the kernel counted it. */
export interface ChildRun {
  result: unknown
  /** From the task sent to the exit. */
  ms: number
  /** The child's peak resident memory, as it read its own (VmHWM; 0 where unknown). */
  peakRssBytes: number
  /** The child's CPU time, user and system. */
  cpuMs: number
  /** Its RSS when the task began: what the task itself added is the peak less this. */
  rssAtTaskBytes: number
  /** Whether it was started ahead of its task (`warm`). */
  startedAhead: boolean
}

/** A run's figures as the job logs them beside its own fields. */
export const childRunFields = (run: ChildRun) => ({
  duration_ms: run.ms,
  cpu_ms: run.cpuMs,
  peak_rss_bytes: run.peakRssBytes,
  rss_at_task_bytes: run.rssAtTaskBytes,
  started_ahead: run.startedAhead,
})

export class ReportProcessError extends Error {
  override name = 'ReportProcessError'
}

export interface ReportProcesses {
  /**
   * Runs `task` in a report process and resolves with the result it sends back; a child that has
   * not answered within `timeoutMs` is killed. The label names the work in errors ("message <id>").
   */
  run(label: string, task: unknown, timeoutMs: number): Promise<ChildRun>
  /**
   * Starts a process ahead of its task, so that the next `run` finds its code loaded and its
   * connections open (~0.25 s): called when a large message starts arriving. At most one waits;
   * one that gets no task exits by itself (src/report-process.ts).
   */
  warm(): void
}

interface Child {
  process: Subprocess<'ignore', 'inherit', 'inherit'>
  answer: ChildAnswer | null
}

export function reportProcesses(options: ReportProcessOptions): ReportProcesses {
  let waiting: Child | null = null
  const start = (): Child => {
    const child: Child = {
      answer: null,
      process: Bun.spawn([process.execPath, options.entry], {
        // Its log lines go where this process's go; it reads nothing.
        stdio: ['ignore', 'inherit', 'inherit'],
        serialization: 'json',
        ipc(message) {
          // The first answer is the task's; a failure while the child closes its connections
          // after it changes nothing that was committed.
          child.answer ??= message as ChildAnswer
        },
      }),
    }
    child.process.send({ settings: options.settings } satisfies ChildMessage)
    return child
  }
  return {
    warm() {
      if (waiting !== null) return
      const child = start()
      waiting = child
      void child.process.exited.then(() => {
        if (waiting === child) waiting = null
      })
    },
    run: (label, task, timeoutMs) =>
      options.gate(() => {
        const ready = waiting !== null && waiting.process.exitCode === null ? waiting : null
        waiting = null
        return runTask(ready ?? start(), label, task, timeoutMs, ready !== null)
      }),
  }
}

async function runTask(
  child: Child,
  label: string,
  task: unknown,
  timeoutMs: number,
  startedAhead: boolean,
): Promise<ChildRun> {
  const started = performance.now()
  child.process.send({ label, task } satisfies ChildMessage)
  const timer = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs)
  let code: number
  try {
    code = await child.process.exited
  } finally {
    clearTimeout(timer)
  }
  const got = child.answer as ChildAnswer | null
  if (got?.ok === true) {
    const usage = child.process.resourceUsage()
    return {
      result: got.result,
      ms: Math.round(performance.now() - started),
      // The child's own figure (its VmHWM): the rusage of a child read here carries this process's
      // RSS at the fork on Linux, whatever the child used itself.
      peakRssBytes: got.peakRssBytes ?? 0,
      cpuMs: Math.round(Number(usage?.cpuTime.total ?? 0n) / 1000),
      rssAtTaskBytes: got.rssAtTaskBytes ?? 0,
      startedAhead,
    }
  }
  const why =
    got?.ok === false
      ? got.error
      : child.process.signalCode !== null
        ? `killed by ${child.process.signalCode}`
        : `exited with code ${code} and no answer`
  throw new ReportProcessError(`the report process for ${label} failed: ${why}`)
}
