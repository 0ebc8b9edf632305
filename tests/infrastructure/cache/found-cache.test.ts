import { expect, test } from 'bun:test'
import { cacheFound } from '../../../infrastructure/cache/found-cache.ts'

function counted(values: Record<string, string | null>) {
  const calls: string[] = []
  const load = async (key: string) => {
    calls.push(key)
    return values[key] ?? null
  }
  return { calls, load }
}

test('a hit is served from memory until it expires, then loaded again', async () => {
  let now = 0
  const { calls, load } = counted({ a: 'A' })
  const get = cacheFound(load, { ttlMs: 1000, max: 10, now: () => now })
  expect(await get('a')).toBe('A')
  now = 999
  expect(await get('a')).toBe('A')
  expect(calls).toEqual(['a'])
  now = 1000
  expect(await get('a')).toBe('A')
  expect(calls).toEqual(['a', 'a'])
})

test('a miss is never cached: what appears later is found at once', async () => {
  const values: Record<string, string | null> = { b: null }
  const { calls, load } = counted(values)
  const get = cacheFound(load, { ttlMs: 60_000, max: 10, now: () => 0 })
  expect(await get('b')).toBeNull()
  values.b = 'B'
  expect(await get('b')).toBe('B')
  expect(calls).toEqual(['b', 'b'])
})

test('at most `max` entries: the oldest is dropped first', async () => {
  const { calls, load } = counted({ a: 'A', b: 'B', c: 'C' })
  const get = cacheFound(load, { ttlMs: 60_000, max: 2, now: () => 0 })
  await get('a')
  await get('b')
  await get('c')
  await get('b')
  await get('a')
  expect(calls).toEqual(['a', 'b', 'c', 'a'])
})

test('what counts as found can be chosen: failures are returned but not kept', async () => {
  let calls = 0
  const get = cacheFound(
    async (key: string) => {
      calls++
      return key === 'ok' ? { ok: true } : { ok: false }
    },
    { ttlMs: 60_000, max: 10, now: () => 0, found: (v) => v.ok },
  )
  expect(await get('no')).toEqual({ ok: false })
  expect(await get('no')).toEqual({ ok: false })
  expect(await get('ok')).toEqual({ ok: true })
  expect(await get('ok')).toEqual({ ok: true })
  expect(calls).toBe(3)
})
