import { expect, test } from 'bun:test'
import { singleFlight } from '../../../domain/shared/single-flight.ts'

test('calls for one key while one is in flight share it; after it settles the next call asks again', async () => {
  let loads = 0
  let release: (value: string) => void = () => {}
  const load = singleFlight((key: string, suffix: string) => {
    loads++
    return new Promise<string>((resolve) => {
      release = (value) => resolve(`${key}:${value}${suffix}`)
    })
  })
  const a = load('t', '!')
  const b = load('t', '?')
  expect(loads).toBe(1)
  release('1')
  expect(await Promise.all([a, b])).toEqual(['t:1!', 't:1!'])
  const c = load('t', '?')
  expect(loads).toBe(2)
  release('2')
  expect(await c).toBe('t:2?')
})

test('a failure reaches every caller sharing it and is not remembered', async () => {
  let attempt = 0
  const load = singleFlight(async (_key: string) => {
    attempt++
    if (attempt === 1) throw new Error('down')
    return attempt
  })
  const [a, b] = await Promise.allSettled([load('k'), load('k')])
  expect(a.status).toBe('rejected')
  expect(b.status).toBe('rejected')
  expect(await load('k')).toBe(2)
})
