// The progress line of `cli import`: on a terminal only (process.stdout.isTTY), redrawn in place
// under the per-file lines; off a terminal (a pipe, a log file, CI) nothing but the lines is written.

export interface Progress {
  /** A line that stays (one per file). */
  line(text: string): void
  /** Moves the bar: `done` of `total` bytes, the file now being read. */
  update(done: number, label: string): void
  /** Clears the bar for good. */
  finish(): void
}

const WIDTH = 24

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`

export function renderBar(done: number, total: number, label: string, columns: number): string {
  const ratio = total === 0 ? 1 : Math.min(1, done / total)
  const filled = Math.round(ratio * WIDTH)
  const head = `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${megabytes(done)} of ${megabytes(total)} `
  const room = Math.max(0, columns - head.length - 1)
  const tail = label.length > room ? `…${label.slice(label.length - room + 1)}` : label
  return head + (room > 0 ? tail : '')
}

export function progress(
  out: { write(text: string): unknown; isTTY?: boolean; columns?: number },
  total: number,
): Progress {
  if (!out.isTTY) {
    return { line: (text) => void out.write(`${text}\n`), update() {}, finish() {} }
  }
  const CLEAR = '\r\x1b[2K'
  let bar = ''
  return {
    line(text) {
      out.write(`${CLEAR}${text}\n${bar}`)
    },
    update(done, label) {
      const next = renderBar(done, total, label, out.columns ?? 80)
      if (next === bar) return // a large file reports every chunk; the terminal only needs changes
      bar = next
      out.write(`${CLEAR}${bar}`)
    },
    finish() {
      if (bar !== '') out.write(CLEAR)
      bar = ''
    },
  }
}
