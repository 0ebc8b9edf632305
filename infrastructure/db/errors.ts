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

// The database cannot take the statement now, whatever it was, and a retry a few seconds later may
// well succeed, so the API answers 503 with Retry-After instead of a 500 (docs/api.md, "Errors"):
// - the server's SQLSTATEs: too many connections (53300), shutting down or starting (57P01-57P03),
//   the connection exceptions of class 08 that are about the connection (not 08P01, a protocol
//   violation: a bug of ours; not 08007, where a retry could apply a commit twice);
// - postgres.js's own connection errors (CONNECT_TIMEOUT, CONNECTION_*), which carry the address;
// - a socket error (ECONNREFUSED and kin) only when a postgres.js query was rejected with it (the
//   driver gives the error its `query`), never the same code from mail or another socket.
// node-postgres (pg-boss's pool) reports a lost connection without a code: still a 500.
const UNAVAILABLE_SQLSTATES = new Set([
  '53300',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
])
const CLIENT_CODES = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
])
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
])

export function isDatabaseUnavailable(error: unknown): boolean {
  const found = findPgError(error)
  const code = found?.code
  if (found === null || code === undefined) return false
  if (UNAVAILABLE_SQLSTATES.has(code)) return true
  if (CLIENT_CODES.has(code)) return 'address' in found
  if (SOCKET_CODES.has(code)) return 'query' in found && 'syscall' in found
  return false
}
