import { expect, test } from 'bun:test'
import { cpuSlices } from '../../../infrastructure/runtime/cpu-slices.ts'

test('a slice is due once its time is spent, and a pause starts the next one', async () => {
  let now = 100
  let turns = 0
  const slices = cpuSlices(
    5,
    () => now,
    async () => {
      turns++
      now += 1
    },
  )
  expect(slices.due()).toBe(false)
  now = 104.9
  expect(slices.due()).toBe(false)
  now = 105
  expect(slices.due()).toBe(true)
  await slices.pause()
  expect(turns).toBe(1)
  // The new slice starts when the work resumes (after the turn), not when it paused.
  expect(slices.due()).toBe(false)
  now = 110.9
  expect(slices.due()).toBe(false)
  now = 111
  expect(slices.due()).toBe(true)
})

test('a slice of 0 turns slicing off', async () => {
  let now = 0
  const slices = cpuSlices(0, () => now)
  now = 1e9
  expect(slices.due()).toBe(false)
})

test('a pause lets the event loop serve a request that arrived during a busy slice', async () => {
  // A server in this process and CPU work that pauses every 5 ms: the request is answered while
  // the work goes on, instead of after it (which is what a chain of microtasks would do).
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('ok') })
  try {
    let done = false
    let finishedAt = 0
    const work = (async () => {
      const slices = cpuSlices(5)
      const until = performance.now() + 400
      let x = 0
      while (performance.now() < until) {
        x += Math.sqrt(x + 1)
        if (slices.due()) await slices.pause()
      }
      done = true
      finishedAt = performance.now()
      return x
    })()
    const response = await fetch(`http://127.0.0.1:${server.port}/`)
    const answeredAt = performance.now()
    expect(await response.text()).toBe('ok')
    expect(done).toBe(false)
    await work
    expect(finishedAt).toBeGreaterThan(answeredAt)
  } finally {
    server.stop(true)
  }
})

test('without pauses the same request waits for the whole stretch (the control)', async () => {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('ok') })
  try {
    let finishedAt = 0
    const work = (async () => {
      const slices = cpuSlices(0)
      const until = performance.now() + 200
      let x = 0
      while (performance.now() < until) {
        x += Math.sqrt(x + 1)
        if (slices.due()) await slices.pause()
        await Promise.resolve()
      }
      finishedAt = performance.now()
      return x
    })()
    const response = await fetch(`http://127.0.0.1:${server.port}/`)
    const answeredAt = performance.now()
    await response.text()
    await work
    expect(answeredAt).toBeGreaterThanOrEqual(finishedAt)
  } finally {
    server.stop(true)
  }
})
