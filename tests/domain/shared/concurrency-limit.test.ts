import { expect, test } from 'bun:test'
import { concurrencyLimit } from '../../../domain/shared/concurrency-limit.ts'

test('at most `max` tasks run at once; the others start in arrival order as places free up', async () => {
  const gate = concurrencyLimit(2)
  let running = 0
  let most = 0
  const started: number[] = []
  const releases: (() => void)[] = []
  const tasks = [0, 1, 2, 3, 4].map((n) =>
    gate(async () => {
      started.push(n)
      running++
      most = Math.max(most, running)
      await new Promise<void>((resolve) => releases.push(resolve))
      running--
      return n * 10
    }),
  )
  await Bun.sleep(1)
  expect(started).toEqual([0, 1])
  releases[1]!()
  await Bun.sleep(1)
  expect(started).toEqual([0, 1, 2])
  while (releases.length < 5) {
    for (const release of releases) release()
    await Bun.sleep(1)
  }
  for (const release of releases) release()
  expect(await Promise.all(tasks)).toEqual([0, 10, 20, 30, 40])
  expect(started).toEqual([0, 1, 2, 3, 4])
  expect(most).toBe(2)
})

test('a failing task frees its place and passes its error on', async () => {
  const gate = concurrencyLimit(1)
  await expect(gate(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
  expect(await gate(async () => 'next')).toBe('next')
})
