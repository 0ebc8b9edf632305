import { type Database, openPostgres } from '../infrastructure/db/database.ts'
import { openEmbedded } from '../infrastructure/db/embedded.ts'
import type { Config } from './config.ts'

/**
 * PostgreSQL when DATABASE_URL is set, else the embedded PGlite in DATA_DIR. The service serves the
 * embedded database on a socket (`serveSocket`) so the CLI reaches it while the service runs.
 */
export function openDatabase(
  config: Config,
  options: { serveSocket: boolean; poolSize?: number },
): Promise<Database> {
  if (config.databaseUrl !== null)
    return Promise.resolve(openPostgres(config.databaseUrl, { max: options.poolSize }))
  return openEmbedded({ dataDir: config.dataDir, serveSocket: options.serveSocket })
}
