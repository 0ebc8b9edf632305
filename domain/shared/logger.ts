// Logging is a port: the HTTP plugins, the jobs and the adapters write through this interface, and
// the process hands them its logger (infrastructure/logging/json-logger.ts writes JSON lines).
// Nothing here writes anywhere.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/** An error as log fields: message, name and stack for an Error, its text for anything else. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.message, error_name: error.name, stack: error.stack }
  // Libraries emit plain objects too (pg-boss): their fields, not "[object Object]".
  if (typeof error === 'object' && error !== null) {
    try {
      return { error: JSON.stringify(error) }
    } catch {
      return { error: Object.prototype.toString.call(error) }
    }
  }
  return { error: String(error) }
}
