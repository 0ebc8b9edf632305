// /readyz (docs/operations.md): ready when the database answers and every migration is applied. A
// check that does not complete within 2 s counts as not ready — a wedged database must make the
// probe fail, not hang it. One check at a time: probes arriving while one runs share it, so a
// database that stopped answering does not collect a new query per probe.

export const READY_TIMEOUT_MS = 2_000

export function boundedReadiness(
  check: () => Promise<boolean>,
  timeoutMs = READY_TIMEOUT_MS,
): () => Promise<boolean> {
  let running: Promise<boolean> | null = null
  return async () => {
    running ??= check()
      .catch(() => false)
      .finally(() => {
        running = null
      })
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    try {
      return await Promise.race([running, late])
    } finally {
      clearTimeout(timer)
    }
  }
}
