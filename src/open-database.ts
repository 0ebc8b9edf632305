import { type Database, openPostgres } from '../infrastructure/db/database.ts'
import type { Config } from './config.ts'

/**
 * PostgreSQL when DATABASE_URL is set, else the embedded PGlite in DATA_DIR. The service serves the
 * embedded database on a socket (`serveSocket`) so the CLI reaches it while the service runs.
 */
export async function openDatabase(
  config: Config,
  options: { serveSocket: boolean; poolSize?: number },
): Promise<Database> {
  if (config.databaseUrl !== null) return openPostgres(config.databaseUrl, { max: options.poolSize })
  // PGlite and its driver are loaded only for the embedded database.
  const { openEmbedded } = await import('../infrastructure/db/embedded.ts')
  return openEmbedded({ dataDir: config.dataDir, serveSocket: options.serveSocket })
}
