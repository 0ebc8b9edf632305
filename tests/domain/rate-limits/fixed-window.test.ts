import { expect, test } from 'bun:test'
import { consume, decide, windowAt } from '../../../domain/rate-limits/fixed-window.ts'

const policy = { scope: 'api', limit: 3, windowSeconds: 60 }

test('windows are calendar-aligned', () => {
  expect(windowAt(new Date('2026-01-01T10:00:59.999Z'), 60)).toEqual({
    start: Date.parse('2026-01-01T10:00:00Z') / 1000,
    reset: Date.parse('2026-01-01T10:01:00Z') / 1000,
  })
  expect(windowAt(new Date('2026-01-01T10:59:00Z'), 3600).start).toBe(
    Date.parse('2026-01-01T10:00:00Z') / 1000,
  )
})

test('remaining counts down, the request past the limit is refused with the seconds left', () => {
  const now = new Date('2026-01-01T10:00:45Z')
  const window = windowAt(now, 60)
  expect(decide(1, policy, window, now)).toMatchObject({ allowed: true, remaining: 2 })
  expect(decide(3, policy, window, now)).toMatchObject({ allowed: true, remaining: 0 })
  expect(decide(4, policy, window, now)).toEqual({
    allowed: false,
    limit: 3,
    remaining: 0,
    reset: window.reset,
    retryAfter: 15,
  })
  // Never tell a client to retry in 0 seconds.
  expect(decide(4, policy, window, new Date('2026-01-01T10:00:59.900Z')).retryAfter).toBe(1)
})

test('consume keys the counter by scope, subject and window', async () => {
  const seen: string[] = []
  const counter = {
    hit: async (key: string, window: { start: number }) => {
      seen.push(`${key}@${window.start}`)
      return seen.length
    },
  }
  const now = new Date('2026-01-01T10:00:00Z')
  await consume({ counter }, { policy, subject: 'tok1', now })
  await consume({ counter }, { policy: { ...policy, scope: 'public' }, subject: '192.0.2.1', now })
  expect(seen).toEqual([`api:tok1@${now.getTime() / 1000}`, `public:192.0.2.1@${now.getTime() / 1000}`])
})
