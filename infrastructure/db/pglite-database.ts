import type { PGlite } from '@electric-sql/pglite'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import type { Database, Db } from './database.ts'

// The embedded database's Drizzle handle, apart from database.ts so that a process on PostgreSQL
// never loads PGlite's driver (src/open-database.ts imports the embedded database on demand).

export function wrapPglite(
  pglite: PGlite,
  onClose: () => Promise<void>,
  stopSocket?: () => Promise<void>,
): Database {
  const db = drizzlePglite({ client: pglite, casing: 'snake_case' }) as unknown as Db
  return { kind: 'pglite', db, pglite, countersDb: db, close: onClose, stopSocket }
}
