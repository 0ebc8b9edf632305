// At most `max` tasks at a time; the others wait their turn in arrival order. Bounds what one
// process spends at once on work whose callers wait for it (reports processed inline: memory and
// CPU, docs/ingestion.md), where a queue is not an option because the caller wants the answer.

export type Gate = <T>(task: () => Promise<T>) => Promise<T>

export function concurrencyLimit(max: number): Gate {
  let running = 0
  const waiting: (() => void)[] = []
  const release = () => {
    const next = waiting.shift()
    if (next === undefined) running--
    else next()
  }
  return async (task) => {
    if (running < max) running++
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      release()
    }
  }
}
