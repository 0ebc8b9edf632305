import { expect, test } from 'bun:test'
import { ByteBudget } from '../../../src/jobs/byte-budget.ts'

// The worker's admission by bytes (docs/ingestion.md, "Memory").

test('messages are admitted while their sizes fit, in arrival order', async () => {
  const budget = new ByteBudget(100)
  const admitted: string[] = []
  const take = (name: string, bytes: number) =>
    budget.acquire(bytes).then((release) => {
      admitted.push(name)
      return release
    })
  const a = await take('a', 60)
  const b = await take('b', 40)
  expect(budget.inFlight).toBe(100)
  const c = take('c', 30)
  // d would fit after c, but waits its turn: a large message is not starved by small ones.
  const d = take('d', 10)
  await Bun.sleep(5)
  expect(admitted).toEqual(['a', 'b'])
  a()
  const [releaseC, releaseD] = await Promise.all([c, d])
  expect(admitted).toEqual(['a', 'b', 'c', 'd'])
  expect(budget.inFlight).toBe(80)
  b()
  releaseC()
  releaseD()
  releaseD()
  expect(budget.inFlight).toBe(0)
})

test('a message larger than the whole budget runs alone', async () => {
  const budget = new ByteBudget(100)
  const small = await budget.acquire(10)
  let bigAdmitted = false
  const big = budget.acquire(500).then((release) => {
    bigAdmitted = true
    return release
  })
  await Bun.sleep(5)
  expect(bigAdmitted).toBe(false)
  small()
  const release = await big
  expect(budget.inFlight).toBe(500)
  let nextAdmitted = false
  const next = budget.acquire(1).then((r) => {
    nextAdmitted = true
    return r
  })
  await Bun.sleep(5)
  expect(nextAdmitted).toBe(false)
  release()
  ;(await next)()
  expect(budget.inFlight).toBe(0)
})

test('at most maxRunning messages at once, however small (INGEST_WORKER_CONCURRENCY)', async () => {
  const budget = new ByteBudget(1000, 2)
  const first = await budget.acquire(1)
  const second = await budget.acquire(1)
  let thirdAdmitted = false
  const third = budget.acquire(1).then((release) => {
    thirdAdmitted = true
    return release
  })
  await Bun.sleep(5)
  expect(thirdAdmitted).toBe(false)
  first()
  const release = await third
  expect(budget.inFlight).toBe(2)
  second()
  release()
  expect(budget.inFlight).toBe(0)
})
