// Many requests of one token at once all increment one counter row (docs/api.md "Authentication and limits": the limit is per
// token, shared by every process). One UPDATE per request makes them queue on that row's lock in
// PostgreSQL, one commit after another: measured, the limiter was most of an authenticated
// request's latency at 50 concurrent connections. Here the hits of one key that arrive while its
// increment is in flight wait and go together as one `+ n`; each gets its own place in the count
// (the total before the batch + its position), so decisions stay exact, across processes too,
// because every batch is still one atomic increment in the shared database.

import type { RateLimitCounter, Window } from './fixed-window.ts'

/** An atomic `count += n` that answers the count after it. */
export interface BatchCounter {
  hitBy(key: string, window: Window, n: number): Promise<number>
}

interface Waiter {
  resolve: (count: number) => void
  reject: (error: unknown) => void
}

interface KeyState {
  key: string
  window: Window
  queue: Waiter[]
}

export function coalescedCounter(inner: BatchCounter): RateLimitCounter {
  const busy = new Map<string, KeyState>()

  async function drain(id: string, state: KeyState): Promise<void> {
    while (state.queue.length > 0) {
      const batch = state.queue
      state.queue = []
      try {
        const total = await inner.hitBy(state.key, state.window, batch.length)
        const first = total - batch.length + 1
        for (const [i, waiter] of batch.entries()) waiter.resolve(first + i)
      } catch (error) {
        for (const waiter of batch) waiter.reject(error)
      }
    }
    busy.delete(id)
  }

  return {
    hit(key, window) {
      const id = `${window.start}:${key}`
      return new Promise<number>((resolve, reject) => {
        const state = busy.get(id)
        if (state !== undefined) {
          state.queue.push({ resolve, reject })
          return
        }
        const fresh: KeyState = { key, window, queue: [{ resolve, reject }] }
        busy.set(id, fresh)
        void drain(id, fresh)
      })
    },
  }
}
