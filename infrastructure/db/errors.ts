// PostgreSQL SQLSTATE 23505; postgres.js and PGlite both expose `code` and `constraint_name`/`constraint`.
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = findPgError(error)
  if (e === null || e.code !== '23505') return false
  return constraint === undefined || e.constraint_name === constraint || e.constraint === constraint
}

// SQLSTATE 23503: a row refers to one that is not there (or no longer, after a concurrent delete).
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const e = findPgError(error)
  if (e === null || e.code !== '23503') return false
  return constraint === undefined || e.constraint_name === constraint || e.constraint === constraint
}

interface PgError {
  code?: string
  constraint_name?: string
  constraint?: string
}

// Drizzle wraps driver errors in a DrizzleQueryError whose `cause` is the driver's error.
function findPgError(error: unknown): PgError | null {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    if (typeof (current as PgError).code === 'string') return current as PgError
    current = (current as { cause?: unknown }).cause
  }
  return null
}

// The database cannot take the statement now, whatever it was: too many connections (SQLSTATE
// 53300), a server shutting down or starting (57P01-57P03), any connection exception (class 08),
// or the client's own view of a lost connection (postgres.js's CONNECT_TIMEOUT and CONNECTION_*
// codes, the socket's ECONNREFUSED and kin). A retry a few seconds later may well succeed, so the
// API answers 503 with Retry-After instead of a 500 (docs/api.md, "Errors").
const UNAVAILABLE_CODES = new Set([
  '53300',
  '57P01',
  '57P02',
  '57P03',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
])

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = findPgError(error)?.code
  if (code === undefined) return false
  return UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)
}
