import { expect, test } from 'bun:test'
import { type BatchCounter, coalescedCounter } from '../../../domain/rate-limits/coalesced-counter.ts'

// The batching itself, over an in-memory BatchCounter whose increments we release by hand (the real
// upsert is tested in tests/infrastructure/db/rate-limit-counter.test.ts).

function gatedCounter() {
  const totals = new Map<string, number>()
  const calls: { key: string; n: number; release: () => void; fail: (e: Error) => void }[] = []
  const inner: BatchCounter = {
    hitBy: (key, _window, n) =>
      new Promise<number>((resolve, reject) => {
        calls.push({
          key,
          n,
          release: () => {
            const total = (totals.get(key) ?? 0) + n
            totals.set(key, total)
            resolve(total)
          },
          fail: reject,
        })
      }),
  }
  return { inner, calls }
}

const window = { start: 0, reset: 60 }

test('the first hit goes at once; hits arriving meanwhile go together as one increment, in order', async () => {
  const { inner, calls } = gatedCounter()
  const counter = coalescedCounter(inner)
  const first = counter.hit('k', window)
  expect(calls.map((c) => c.n)).toEqual([1])
  const rest = [counter.hit('k', window), counter.hit('k', window), counter.hit('k', window)]
  expect(calls).toHaveLength(1)
  calls[0]!.release()
  expect(await first).toBe(1)
  await Bun.sleep(0)
  expect(calls.map((c) => c.n)).toEqual([1, 3])
  calls[1]!.release()
  expect(await Promise.all(rest)).toEqual([2, 3, 4])
  // Idle again: the next hit is sent on its own.
  const later = counter.hit('k', window)
  expect(calls.map((c) => c.n)).toEqual([1, 3, 1])
  calls[2]!.release()
  expect(await later).toBe(5)
})

test('other keys are not held back; a failed increment fails its batch only', async () => {
  const { inner, calls } = gatedCounter()
  const counter = coalescedCounter(inner)
  const a = counter.hit('a', window)
  const b = counter.hit('b', window)
  expect(calls.map((c) => c.key)).toEqual(['a', 'b'])
  const queued = counter.hit('a', window)
  calls[0]!.fail(new Error('connection lost'))
  await expect(a).rejects.toThrow('connection lost')
  await Bun.sleep(0)
  calls[2]!.release()
  expect(await queued).toBe(1)
  calls[1]!.release()
  expect(await b).toBe(1)
})
