/**
 * BENCH_SERVICE_ENV="NAME=value ...": settings passed to the services a bench starts, so two
 * variants can be run one after the other (alternating) on the same code.
 */
export function serviceEnv(): Record<string, string> {
  return Object.fromEntries(
    (process.env.BENCH_SERVICE_ENV ?? '')
      .split(/\s+/)
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  )
}
