// docs/api.md "Authentication and limits": fixed calendar windows per key (the minute or hour containing the request), as GitHub
// does: Remaining counts down within the window and Reset is its end in Unix epoch seconds.

export interface RateLimitPolicy {
  /** Namespace of the key, e.g. `api`, `public`, `dns-write`. */
  scope: string
  limit: number
  windowSeconds: number
}

export interface Window {
  /** Unix seconds of the window's start: the counter's key together with the subject. */
  start: number
  /** Unix seconds when the window resets. */
  reset: number
}

export function windowAt(now: Date, windowSeconds: number): Window {
  const seconds = Math.floor(now.getTime() / 1000)
  const start = seconds - (seconds % windowSeconds)
  return { start, reset: start + windowSeconds }
}

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  reset: number
  /** Seconds to wait, set when refused (at least 1). */
  retryAfter: number
}

/** `count` is the number of hits in the window including this one. */
export function decide(count: number, policy: RateLimitPolicy, window: Window, now: Date): RateDecision {
  const allowed = count <= policy.limit
  const retryAfter = allowed ? 0 : Math.max(1, window.reset - Math.floor(now.getTime() / 1000))
  return {
    allowed,
    limit: policy.limit,
    remaining: Math.max(0, policy.limit - count),
    reset: window.reset,
    retryAfter,
  }
}

/** One atomic increment-and-read per request: the only database work the limiter adds to a request. */
export interface RateLimitCounter {
  hit(key: string, window: Window): Promise<number>
}

export async function consume(
  deps: { counter: RateLimitCounter },
  input: { policy: RateLimitPolicy; subject: string; now: Date },
): Promise<RateDecision> {
  const window = windowAt(input.now, input.policy.windowSeconds)
  const count = await deps.counter.hit(`${input.policy.scope}:${input.subject}`, window)
  return decide(count, input.policy, window, input.now)
}
