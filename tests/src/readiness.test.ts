import { expect, test } from 'bun:test'
import { boundedReadiness, READY_TIMEOUT_MS } from '../../src/readiness.ts'
import { healthRoutes } from '../../src/routes/health.ts'

// /readyz answers within its 2 s budget whatever the database does (docs/operations.md).

const never = () => new Promise<boolean>(() => {})

test('a check that does not complete within 2 s makes /readyz answer 503', async () => {
  expect(READY_TIMEOUT_MS).toBe(2_000)
  const app = healthRoutes({ ready: boundedReadiness(never) })
  const started = performance.now()
  const response = await app.handle(new Request('http://localhost/readyz'))
  const took = performance.now() - started
  expect(response.status).toBe(503)
  expect(await response.json()).toEqual({ status: 'not_ready' })
  expect(took).toBeGreaterThanOrEqual(1_950)
  expect(took).toBeLessThan(3_000)
  // /healthz does not touch the database and stays ok.
  expect((await app.handle(new Request('http://localhost/healthz'))).status).toBe(200)
})

test('probes share the check in flight instead of piling queries on a stuck database', async () => {
  let calls = 0
  let finish: (ready: boolean) => void = () => {}
  const ready = boundedReadiness(() => {
    calls++
    return new Promise<boolean>((resolve) => {
      finish = resolve
    })
  }, 50)
  expect(await Promise.all([ready(), ready()])).toEqual([false, false])
  expect(await ready()).toBe(false)
  expect(calls).toBe(1)
  // Once the stuck check completes, the next probe runs a fresh one.
  finish(true)
  await Bun.sleep(0)
  const next = ready()
  finish(true)
  expect(await next).toBe(true)
  expect(calls).toBe(2)
})

test('a failing check is not ready; a passing one is', async () => {
  expect(await boundedReadiness(() => Promise.reject(new Error('connection refused')))()).toBe(false)
  expect(await boundedReadiness(async () => false)()).toBe(false)
  const app = healthRoutes({ ready: boundedReadiness(async () => true) })
  const response = await app.handle(new Request('http://localhost/readyz'))
  expect(response.status).toBe(200)
  expect(await response.json()).toEqual({ status: 'ready' })
})
