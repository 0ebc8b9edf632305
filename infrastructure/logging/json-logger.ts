import type { LogLevel } from '../../src/config.ts'

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/** One JSON object per line on stdout, the format log shippers read without configuration. */
export function jsonLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  const threshold = ORDER[level]
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`)
  }
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
  }
}

export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.message, error_name: error.name, stack: error.stack }
  return { error: String(error) }
}
