import type { Database } from '../db/database.ts'

// A transaction as plain SQL, the same on postgres.js and PGlite, for the few write paths that are
// hot enough to bypass the query builder (report storage).

export interface SqlTx {
  query<T>(text: string, params?: unknown[]): Promise<T[]>
  /** Set on PostgreSQL: a COPY FROM STDIN writer. */
  copy?: (statement: string) => Promise<NodeJS.WritableStream>
}

interface CopyQuery {
  writable(): Promise<NodeJS.WritableStream>
  reject(error: unknown): void
}

type CopyStream = NodeJS.WritableStream & {
  destroy(error?: Error): void
  destroyed: boolean
  writableFinished: boolean
}

/**
 * A COPY FROM STDIN stream whose refusal always reaches the stream. postgres.js lets go of the
 * stream once it has sent CopyDone (node_modules/postgres/src/connection.js, CopyInResponse's
 * `final`): a row refused after that (one in the last chunk, e.g. a value out of a column's range)
 * only rejects the query, which had already resolved to the stream, so neither 'finish' nor
 * 'error' came and the write waited forever with its transaction open. The query's rejection is
 * handed to the stream as its error.
 */
async function copyIn(query: CopyQuery): Promise<NodeJS.WritableStream> {
  const stream = (await query.writable()) as CopyStream
  const reject = query.reject
  query.reject = (error: unknown) => {
    if (!stream.destroyed && !stream.writableFinished)
      stream.destroy(error instanceof Error ? error : new Error(String(error)))
    reject(error)
  }
  return stream
}

export async function transactionOf<T>(database: Database, work: (tx: SqlTx) => Promise<T>): Promise<T> {
  if (database.kind === 'postgres') {
    return (await database.client.begin((sql) =>
      work({
        query: (text, params) =>
          sql.unsafe(text, (params ?? []) as never[], { prepare: true }) as unknown as Promise<never[]>,
        // Not through a service's PGlite socket, which refuses COPY FROM STDIN (socket-queue.ts).
        ...(database.socketPath === undefined
          ? {
              copy: (statement: string) => copyIn(sql.unsafe(statement) as unknown as CopyQuery),
            }
          : {}),
      }),
    )) as T
  }
  return database.pglite.transaction((tx) =>
    work({ query: async <R>(text: string, params?: unknown[]) => (await tx.query<R>(text, params)).rows }),
  )
}

// COPY text format (PostgreSQL docs, "COPY", File Formats): tab-separated, \N for NULL, and
// backslash, tab, newline and carriage return escaped.
const SPECIAL = /[\\\t\n\r]/

export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value === 'boolean') return value ? 't' : 'f'
  if (typeof value === 'number') return String(value)
  const text = String(value)
  // Most values need no escaping; the test is much cheaper than a replace.
  if (!SPECIAL.test(text)) return text
  return text.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  )
}

/** A text value of a line built with its column types known: escaped only when it must be. */
export function copyText(value: string): string {
  return SPECIAL.test(value) ? copyField(value) : value
}

const NEEDS_ESCAPE = /["\\]/

/**
 * A PostgreSQL array literal ("Array Value Input" in the manual): every element double-quoted with
 * backslash and quote escaped, so any text survives, and one parameter carries any number of values.
 */
export function pgArray(values: readonly (string | number | boolean | null)[]): string {
  // join() builds one flat string; += would build a rope of every piece first (measured: tens of
  // MB of garbage for a 100,000-source report).
  const parts = values.map((value) => {
    if (value === null) return 'NULL'
    if (typeof value === 'string')
      return NEEDS_ESCAPE.test(value) ? `"${value.replace(/["\\]/g, '\\$&')}"` : `"${value}"`
    return typeof value === 'boolean' ? (value ? 't' : 'f') : String(value)
  })
  return `{${parts.join(',')}}`
}

/** One statement on its own (atomic by itself): no BEGIN/COMMIT round trips. */
export async function statementOf<T>(database: Database, text: string, params: unknown[]): Promise<T[]> {
  if (database.kind === 'postgres')
    return (await database.client.unsafe(text, params as never[], { prepare: true })) as unknown as T[]
  return (await database.pglite.query<T>(text, params)).rows
}

const COPY_CHUNK = 256 * 1024
const INSERT_BATCH = 400

/**
 * How an item becomes a row: its values in column order (INSERT parameters), and optionally its
 * COPY text line (without the newline) built directly, byte-identical to copyLine(values(item)).
 */
export interface RowFormat<T> {
  values(item: T): unknown[]
  line?(item: T): string
}

/** A row's values as one COPY text line: the general form, for rows without a line of their own. */
export function copyLine(values: unknown[]): string {
  return values.map(copyField).join('\t')
}

/**
 * Streams items into a table as rows: COPY on PostgreSQL, batched multi-row INSERTs on PGlite.
 * `collectEvery` rows, a collection hint (see streamCopy).
 */
export async function copyRows<T>(
  tx: SqlTx,
  table: string,
  columns: readonly string[],
  items: AsyncIterable<T>,
  format: RowFormat<T>,
  collectEvery = 5000,
): Promise<void> {
  // Most reports are small: one INSERT costs a round trip, a COPY several. Start with a batch and
  // switch to COPY only when the report turns out to be large.
  const iterator = items[Symbol.asyncIterator]()
  const head: T[] = []
  while (head.length < INSERT_BATCH) {
    const next = await iterator.next()
    if (next.done) {
      if (head.length > 0) await insertBatch(tx, table, columns, head.map(format.values))
      return
    }
    head.push(next.value)
  }
  // The head and the iterator go on as they are: one more async generator around them cost a
  // promise and a turn per row.
  if (tx.copy) await streamCopy(tx.copy, table, columns, head, iterator, format, collectEvery)
  else await streamInserts(tx, table, columns, head, iterator, format)
}

async function insertBatch(
  tx: SqlTx,
  table: string,
  columns: readonly string[],
  batch: unknown[][],
): Promise<void> {
  const params: unknown[] = []
  const tuples = batch.map((row) => `(${row.map((value) => `$${params.push(value)}`).join(', ')})`)
  await tx.query(`insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}`, params)
}

async function streamInserts<T>(
  tx: SqlTx,
  table: string,
  columns: readonly string[],
  head: T[],
  iterator: AsyncIterator<T>,
  format: RowFormat<T>,
) {
  await insertBatch(tx, table, columns, head.map(format.values))
  let batch: unknown[][] = []
  while (true) {
    const next = await iterator.next()
    if (next.done) break
    batch.push(format.values(next.value))
    if (batch.length >= INSERT_BATCH) {
      await insertBatch(tx, table, columns, batch)
      batch = []
    }
  }
  if (batch.length > 0) await insertBatch(tx, table, columns, batch)
}

async function streamCopy<T>(
  copy: NonNullable<SqlTx['copy']>,
  table: string,
  columns: readonly string[],
  head: T[],
  iterator: AsyncIterator<T>,
  format: RowFormat<T>,
  collectEvery: number,
) {
  const line = format.line ?? ((item: T) => copyLine(format.values(item)))
  const stream = await copy(`copy ${table} (${columns.join(', ')}) from stdin`)
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', () => resolve())
    stream.on('error', reject)
  })
  // Awaited below; a refusal that comes while rows are still being built is not unhandled meanwhile.
  done.catch(() => {})
  // A string written whole: postgres.js's Writable encodes it once per chunk. Encoding each line
  // into a reusable 256 KB Uint8Array (TextEncoder.encodeInto) and writing a copy of it was slower
  // on the bench report's 100,000 records: min 446 / median 541 ms against 356 / 418 ms (load 1.4-2);
  // not kept.
  let buffer = ''
  const flush = async () => {
    // Respect back-pressure so a huge report never piles up in memory.
    // A stream destroyed by a refusal never drains: its error ends the wait instead.
    if (!stream.write(buffer))
      await Promise.race([new Promise((resolve) => stream.once('drain', resolve)), done])
    buffer = ''
  }
  try {
    let n = 0
    // Synchronous, so a row that fills no chunk costs no await.
    const add = (item: T) => {
      // Measured (docs/ingestion.md): without a collection hint the heap grows with the parser's
      // short-lived garbage, and the few values kept per source pin those pages, so RSS rose
      // ~120 MB over a 100,000-record report; with a hint every few thousand rows, ~40 MB, at
      // no cost in time.
      if (++n % collectEvery === 0) Bun.gc(false)
      buffer += `${line(item)}\n`
      return buffer.length >= COPY_CHUNK
    }
    for (const item of head) if (add(item)) await flush()
    head.length = 0
    while (true) {
      const next = await iterator.next()
      if (next.done) break
      if (add(next.value)) await flush()
    }
    if (buffer.length > 0) await flush()
  } catch (error) {
    // Abort the COPY so the transaction fails with the original error (not with the stream's).
    done.catch(() => {})
    ;(stream as unknown as { destroy(error: Error): void }).destroy(error as Error)
    throw error
  }
  stream.end()
  await done
}
