import type { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type postgres from 'postgres'
import { postgresClient } from './postgres-url.ts'

/** The Drizzle handle every repository takes: the same API on PostgreSQL and on PGlite. */
export type Db = PgDatabase<PgQueryResultHKT>

export type Database =
  | {
      kind: 'postgres'
      db: Db
      client: postgres.Sql
      url: string
      /** Set when the database is a running service's PGlite reached through its Unix socket. */
      socketPath?: string
      /**
       * For writes whose loss in a crash is harmless (rate-limit counters): a small pool with
       * asynchronous commit, so a request does not wait for a WAL flush (docs/operations.md).
       */
      countersDb: Db
      close(): Promise<void>
    }
  | {
      kind: 'pglite'
      db: Db
      pglite: PGlite
      countersDb: Db
      /**
       * Disconnects the clients of the database socket (the CLI, psql), rolling back what they hold,
       * and takes no more: a stopping service's last work need not wait on a client. Absent when
       * no socket is served (the CLI's own opening, or a DATA_DIR too long for one).
       */
      stopSocket?: () => Promise<void>
      close(): Promise<void>
    }

export interface PostgresOptions {
  /** Pool size; the API and the worker share it. */
  max?: number
  /** Connect through a Unix socket file instead of the URL's host (used for a running service's PGlite). */
  socketPath?: string
}

/**
 * Drizzle runs every query through `unsafe()`, which postgres.js does not prepare, so PostgreSQL
 * parses and plans each one again. Writes (the ingest path: a message, its job, its report) are
 * prepared here, inside transactions too: measured, a third more messages accepted per second.
 * Reads are not: after five runs PostgreSQL may switch a prepared statement to a generic plan,
 * which for the summaries' date ranges was measured twice as slow as a plan for the actual range.
 */
const WRITE =
  /^\s*(insert|update|delete)\b|^\s*with\b[\s\S]*\b(insert\s+into|update\s+\S+\s+set|delete\s+from)\b/i

function preparing(sql: postgres.Sql): postgres.Sql {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe')
        return (query: string, args?: unknown[], options?: { prepare?: boolean }) =>
          target.unsafe(query, args as never[], {
            ...options,
            prepare:
              options?.prepare === true || (args !== undefined && args.length > 0 && WRITE.test(query)),
          })
      if (property === 'begin')
        return (...args: unknown[]) => {
          const work = args.at(-1) as (tx: postgres.TransactionSql) => unknown
          const rest = args.slice(0, -1) as [string]
          return target.begin(...rest, (tx) => work(preparing(tx as unknown as postgres.Sql) as never))
        }
      return Reflect.get(target, property, receiver)
    },
  })
}

export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  // libpq's URL forms, a socket directory among them: postgres-url.ts.
  const client = postgresClient(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // Through a running service's PGlite socket every client shares PGlite's single session, so
    // named prepared statements would outlive this client and collide with the next one's.
    ...(options.socketPath ? { path: options.socketPath, prepare: false } : {}),
    connection: { application_name: 'dmarcwatch' },
  })
  const db = drizzlePostgres({
    client: options.socketPath ? client : preparing(client),
    casing: 'snake_case',
  }) as unknown as Db
  // Rate-limit counters: one upsert per request on a hot row. With synchronous commit every request
  // waited for a WAL flush while holding the row; a counter lost in a crash costs at most one
  // window's accuracy, so these commit asynchronously (measured: 450 → 1,650 upserts/s of one key).
  const counters = options.socketPath
    ? null
    : postgresClient(url, {
        max: 4,
        onnotice: () => {},
        connection: { application_name: 'dmarcwatch-counters', synchronous_commit: 'off' },
      })
  const countersDb =
    counters === null
      ? db
      : (drizzlePostgres({ client: preparing(counters), casing: 'snake_case' }) as unknown as Db)
  return {
    kind: 'postgres',
    db,
    client,
    url,
    socketPath: options.socketPath,
    countersDb,
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), counters?.end({ timeout: 5 })])
    },
  }
}

/** Rows of a raw statement, whichever driver ran it (postgres.js returns an array, PGlite `{rows}`). */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[]
  return ((result as { rows?: T[] }).rows ?? []) as T[]
}
