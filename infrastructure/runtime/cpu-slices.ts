// In the default single-process setup (ROLE=all) the worker and the API share one JavaScript
// thread. A large report is one long chain of promises (parse a chunk, align and roll up its
// records, build COPY text) whose awaits resolve as microtasks, so without help the event loop
// serves no request until the stream waits on the network (issue #20: 100-370 ms stalls measured
// by bench/lag-probe.ts). CPU-bound loops therefore check `due()` as they go and, once their slice
// is spent, `await pause()`: a macrotask, so the loop accepts connections and runs the requests'
// callbacks before the work goes on.
//
// Why setImmediate (measured with a server in the process, 10 connections, 5 ms slices, Bun 1.4):
// a pause costs ~0.45 ms and the requests' p99 was 9.7 ms; setTimeout(0) is clamped to 1 ms
// (1.3 ms a pause, a fifth less work done); Bun.sleep(0) behaves like setImmediate. Slices of
// 10 ms gave a p99 of 32 ms, since a request needs several turns (auth, rate limit, query).

export interface CpuSlices {
  /** True once the current slice is spent: the caller should `await pause()`. Cheap to call often. */
  due(): boolean
  /** Lets the event loop turn (a macrotask), then starts a new slice. */
  pause(): Promise<void>
}

/** The default slice (WORKER_SLICE_MS): a request waits at most about this long per turn it needs. */
export const DEFAULT_SLICE_MS = 5

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Slices of `sliceMs` of CPU work; 0 turns slicing off (`due()` never true). One per stream: each
 * starts its own slice when it resumes, so several streams at once never starve one another.
 */
export function cpuSlices(
  sliceMs: number = DEFAULT_SLICE_MS,
  clock: () => number = () => performance.now(),
  turn: () => Promise<void> = nextTurn,
): CpuSlices {
  if (sliceMs <= 0) return { due: () => false, pause: () => Promise.resolve() }
  let started = clock()
  return {
    due: () => clock() - started >= sliceMs,
    async pause() {
      await turn()
      started = clock()
    },
  }
}
