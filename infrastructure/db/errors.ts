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
