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

/** How much of an error's message a log line carries. */
const MAX_MESSAGE_CHARS = 4000
/** How much of a failed statement's text (never its parameters). */
const MAX_QUERY_CHARS = 300

/**
 * An error as log fields: message, name and stack for an Error, its text for anything else. Drizzle
 * reports a failed statement as `Failed query: <sql>\nparams: <values>` around the driver's error:
 * the values may be a stored mail's bytes (a 64 MB message printed 250 MB as decimals, and the
 * driver's reason was not in it), so the driver's error is what is told, with the statement's start.
 */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error && error.message.startsWith('Failed query: ') && error.cause instanceof Error) {
    const query = error.message.slice('Failed query: '.length).split('\nparams:')[0]!
    return { ...errorFields(error.cause), query: query.slice(0, MAX_QUERY_CHARS) }
  }
  if (error instanceof Error) {
    const message =
      error.message.length > MAX_MESSAGE_CHARS
        ? `${error.message.slice(0, MAX_MESSAGE_CHARS)}…`
        : error.message
    return { error: message, error_name: error.name, stack: error.stack?.slice(0, 2 * MAX_MESSAGE_CHARS) }
  }
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

/** An error's reason on one line, bounded (errorFields' message): for a one-line refusal or exit. */
export function errorLine(error: unknown): string {
  return String(errorFields(error).error).split('\n')[0]!.slice(0, 500)
}
