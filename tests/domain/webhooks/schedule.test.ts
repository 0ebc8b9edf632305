import { describe, expect, test } from 'bun:test'
import {
  type AttemptOutcome,
  type AttemptVerdict,
  afterAttempt,
  classifyAttempt,
  deferForRateLimit,
  MAX_ATTEMPTS,
  nextAttemptAt,
  RETRY_DELAYS_MS,
  webhookRateWindow,
} from '../../../domain/webhooks/schedule.ts'

const at = (iso: string) => new Date(iso)
const response = (status: number): AttemptOutcome => ({ kind: 'response', status })

describe('classifyAttempt', () => {
  const table: [AttemptOutcome, AttemptVerdict][] = [
    [response(200), 'delivered'],
    [response(201), 'delivered'],
    [response(202), 'delivered'],
    [response(204), 'delivered'],
    [response(299), 'delivered'],
    [response(500), 'retry'],
    [response(502), 'retry'],
    [response(503), 'retry'],
    [response(504), 'retry'],
    [response(599), 'retry'],
    [response(408), 'retry'],
    [response(429), 'retry'],
    [{ kind: 'timeout' }, 'retry'],
    [{ kind: 'connection_error', message: 'ECONNREFUSED' }, 'retry'],
    [response(400), 'give_up'],
    [response(401), 'give_up'],
    [response(403), 'give_up'],
    [response(404), 'give_up'],
    [response(405), 'give_up'],
    [response(410), 'give_up'],
    [response(413), 'give_up'],
    [response(422), 'give_up'],
    [response(499), 'give_up'],
    // Redirects are not followed, and a URL that redirects will keep redirecting.
    [response(301), 'give_up'],
    [response(302), 'give_up'],
    [response(307), 'give_up'],
    [response(308), 'give_up'],
    [response(304), 'give_up'],
    [response(101), 'give_up'],
    [{ kind: 'blocked', reason: 'http://x is not https' }, 'give_up'],
  ]
  for (const [outcome, verdict] of table) {
    const label = outcome.kind === 'response' ? `HTTP ${outcome.status}` : outcome.kind
    test(`${label} → ${verdict}`, () => expect(classifyAttempt(outcome)).toBe(verdict))
  }
})

describe('nextAttemptAt', () => {
  const firstFailure = at('2026-03-01T10:00:00.000Z')

  test('five attempts: offsets 5 s, 30 s, 5 min, 1 h from the first failure, then none', () => {
    expect(RETRY_DELAYS_MS).toEqual([0, 5_000, 30_000, 300_000, 3_600_000])
    expect(MAX_ATTEMPTS).toBe(5)
    const due = [1, 2, 3, 4].map((failed) => nextAttemptAt(failed, firstFailure, firstFailure)?.toISOString())
    expect(due).toEqual([
      '2026-03-01T10:00:05.000Z',
      '2026-03-01T10:00:30.000Z',
      '2026-03-01T10:05:00.000Z',
      '2026-03-01T11:00:00.000Z',
    ])
    expect(nextAttemptAt(5, firstFailure, firstFailure)).toBeNull()
    expect(nextAttemptAt(6, firstFailure, firstFailure)).toBeNull()
  })

  test('offsets are from the first failure, not chained from the previous attempt', () => {
    // Attempt 2 ran at +5 s and timed out at +15 s: attempt 3 is still due at +30 s, not +45 s.
    expect(nextAttemptAt(2, firstFailure, at('2026-03-01T10:00:15Z'))?.toISOString()).toBe(
      '2026-03-01T10:00:30.000Z',
    )
  })

  test('a due time already past becomes the end of the last attempt: never in the past, never overlapping', () => {
    const workerWasDown = at('2026-03-01T10:20:00Z')
    expect(nextAttemptAt(2, firstFailure, workerWasDown)).toEqual(workerWasDown)
    expect(nextAttemptAt(4, firstFailure, at('2026-03-01T10:59:59.999Z'))?.toISOString()).toBe(
      '2026-03-01T11:00:00.000Z',
    )
  })

  test('a nonsensical attempt count is a programming error', () => {
    expect(() => nextAttemptAt(0, firstFailure, firstFailure)).toThrow()
    expect(() => nextAttemptAt(1.5, firstFailure, firstFailure)).toThrow()
  })
})

describe('afterAttempt', () => {
  const t0 = at('2026-03-01T10:00:00Z')

  test('delivered and give-up end the delivery at once', () => {
    expect(afterAttempt({ verdict: 'delivered', attempt: 3, endedAt: t0 })).toEqual({ state: 'delivered' })
    expect(afterAttempt({ verdict: 'give_up', attempt: 1, endedAt: t0 })).toEqual({ state: 'failed' })
  })

  test('a whole failing chain: attempts 2..5 at +5 s, +30 s, +5 min, +1 h, then failed', () => {
    let step = afterAttempt({ verdict: 'retry', attempt: 1, endedAt: t0 })
    const times: string[] = []
    for (let attempt = 2; step.state === 'pending'; attempt++) {
      times.push(step.nextAttemptAt.toISOString())
      // Each attempt takes 10 s (a timeout) before failing.
      const endedAt = new Date(step.nextAttemptAt.getTime() + 10_000)
      step = afterAttempt({ verdict: 'retry', attempt, endedAt, firstFailureAt: t0 })
    }
    expect(times).toEqual([
      '2026-03-01T10:00:05.000Z',
      '2026-03-01T10:00:30.000Z',
      '2026-03-01T10:05:00.000Z',
      '2026-03-01T11:00:00.000Z',
    ])
    expect(step).toEqual({ state: 'failed' })
  })
})

describe('rate limit deferral (1000 per calendar hour per account)', () => {
  test('the window is the calendar hour containing now', () => {
    expect(webhookRateWindow(at('2026-03-01T10:59:59.999Z'))).toEqual({
      start: at('2026-03-01T10:00:00Z'),
      end: at('2026-03-01T11:00:00Z'),
    })
    expect(webhookRateWindow(at('2026-03-01T11:00:00Z')).start).toEqual(at('2026-03-01T11:00:00Z'))
  })

  test('up to the limit goes now; the excess waits for the next window, never dropped', () => {
    const { end } = webhookRateWindow(at('2026-03-01T10:42:17Z'))
    expect(deferForRateLimit(0, 1000, end)).toBeNull()
    expect(deferForRateLimit(999, 1000, end)).toBeNull()
    expect(deferForRateLimit(1000, 1000, end)).toEqual(at('2026-03-01T11:00:00Z'))
    expect(deferForRateLimit(5000, 1000, end)).toEqual(at('2026-03-01T11:00:00Z'))
  })

  test('a returned date is a copy, and a zero limit is a configuration bug', () => {
    const end = at('2026-03-01T11:00:00Z')
    const deferred = deferForRateLimit(1, 1, end)!
    deferred.setTime(0)
    expect(end.toISOString()).toBe('2026-03-01T11:00:00.000Z')
    expect(() => deferForRateLimit(0, 0, end)).toThrow()
  })
})
