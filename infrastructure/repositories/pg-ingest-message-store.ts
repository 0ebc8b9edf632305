import { and, count, desc, eq, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm'
import { fromDrizzle, type PgBoss } from 'pg-boss'
import type { IngestMessageStore, NewIngestMessage } from '../../domain/ingest/accept.ts'
import type { JobMessageStore, StoredMessage } from '../../domain/ingest/ports.ts'
import type { QuarantinedMessage, QuarantineStore } from '../../domain/ingest/quarantine.ts'
import { offsetOf, type PageRequest } from '../../domain/shared/pagination.ts'
import { markedText, withDamageMarked } from '../db/damaged-text.ts'
import { type Db, rowsOf } from '../db/database.ts'
import { accounts } from '../db/schema/accounts.ts'
import { ingestMessagePieces, ingestMessages } from '../db/schema/reports.ts'
import { PROCESS_MESSAGE, retriesOf, send } from '../queue/catalogue.ts'
import { processPacer } from '../runtime/gc-pacer.ts'
import { pgArray } from './sql-tx.ts'

/**
 * A message up to this size is stored in one value (ingest_messages.raw), a larger one in pieces
 * of this size (ingest_message_pieces): a bytea travels as a hex string twice its size, so one
 * value per message would cost the intake and the worker several copies of a 64 MB message.
 */
export const MESSAGE_PIECE_BYTES = 1024 * 1024

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** pg-boss on the caller's transaction, so a job exists exactly when its rows are committed. */
export const onTransaction = (tx: Tx) => fromDrizzle(tx as unknown as Parameters<typeof fromDrizzle>[0], sql)

/**
 * How long the job of a message processed inline waits (AcceptInput.processInline): far longer
 * than processing the largest report takes, so it never runs beside the caller; it only matters
 * when the caller died before finishing.
 */
export const INLINE_FALLBACK_SECONDS = 15 * 60

const enqueue = (boss: PgBoss, tx: Tx, messageId: string, startAfter = 0) =>
  // The job carries the queue's retry policy (storage trouble is retried; parse problems quarantine).
  send(
    boss,
    PROCESS_MESSAGE,
    { messageId },
    { db: onTransaction(tx), ...retriesOf(PROCESS_MESSAGE), ...(startAfter > 0 ? { startAfter } : {}) },
  )

/**
 * pg-boss's own statement for the job of message `messageId` (the queue's options applied by
 * `send`, as `enqueue` does), as SQL to run by the caller. A statement of several inserts must
 * begin with their common-table expressions, so the caller's one goes first: `with x as (...), `
 * continues pg-boss's own `with` (the insert that notifies workers) or starts one before its insert.
 */
async function jobInsert(boss: PgBoss, messageId: string, startAfter: number): Promise<SQL> {
  let captured: { text: string; values: unknown[] } | null = null
  const capture = {
    async executeSql(text: string, values?: unknown[]) {
      captured = { text, values: values ?? [] }
      return { rows: [{ id: messageId }] }
    },
  }
  await send(
    boss,
    PROCESS_MESSAGE,
    { messageId },
    { db: capture, ...retriesOf(PROCESS_MESSAGE), ...(startAfter > 0 ? { startAfter } : {}) },
  )
  const statement = captured as { text: string; values: unknown[] } | null
  if (statement === null || statement.values.length !== 1 || statement.text.split('$1').length !== 2)
    throw new Error('pg-boss sent the job in an unexpected form')
  const [before, after] = statement.text.split('$1') as [string, string]
  const head = before.trimStart()
  // pg-boss's insert that notifies workers is itself a `with`: it continues the caller's.
  const start = /^with\s/i.test(head) ? head.replace(/^with\s/i, ', ') : ` ${head}`
  return sql.join([sql.raw(start), sql`${statement.values[0]}`, sql.raw(after)])
}

export function pgIngestMessageStore(db: Db, boss: PgBoss | null) {
  const queue = () => {
    if (boss === null) throw new Error('report intake needs the job queue (pg-boss) in this process')
    return boss
  }
  // The worker loads every message by id: prepared once (a primary-key lookup, so the generic plan
  // is the right one), instead of PostgreSQL parsing and planning it per message (~0.1 ms each,
  // from the statement log of bench:ingest's queue).
  const loadById = () =>
    db
      .select()
      .from(ingestMessages)
      .where(eq(ingestMessages.id, sql.placeholder('id')))
      .prepare('ingest_message_by_id')
  let loadQuery: ReturnType<typeof loadById> | null = null
  const store = {
    async accountByIngestKey(key: string) {
      const rows = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.ingestKey, key))
      return rows[0]?.id ?? null
    },

    async insertAndEnqueue({ deferJob, ...message }: NewIngestMessage) {
      const jobs = queue()
      const { body, ...fields } = message
      const values = { ...fields, size: body.size, sha256: body.sha256 }
      if (body.size <= MESSAGE_PIECE_BYTES) {
        const raw = await joined(body.pieces(), body.size)
        const id = crypto.randomUUID()
        // Deferred like a spooled message's: a job due now would race the caller's inline run
        // and both could count the same duplicate (src/wiring/ingest-now.ts).
        const job = await jobInsert(jobs, id, deferJob ? INLINE_FALLBACK_SECONDS : 0)
        // The row and its job in one statement: atomic like the transaction it replaces, without
        // its BEGIN and COMMIT round trips (issue #20: the API's intake is bound by its statements).
        await db.execute(
          sql`with message as ${db.insert(ingestMessages).values({ ...values, id, raw })} ${job}`,
        )
        return id
      }
      return db.transaction(async (tx) => {
        const pieces = Math.ceil(body.size / MESSAGE_PIECE_BYTES)
        const [row] = await tx
          .insert(ingestMessages)
          .values({ ...values, raw: null, pieces })
          .returning({ id: ingestMessages.id })
        let seq = 0
        let written = 0
        for await (const piece of regroup(body.pieces(), MESSAGE_PIECE_BYTES)) {
          // As hex text decoded by the server: the drivers' own bytea encoders are far slower
          // (PGlite's builds an array of a million strings for a megabyte).
          const hex = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('hex')
          await tx.execute(sql`insert into ingest_message_pieces (account_id, message_id, seq, bytes)
            values (${values.accountId}, ${row!.id}, ${seq++}, decode(${hex}, 'hex'))`)
          written += piece.byteLength
          // Each piece leaves a hex string behind (infrastructure/runtime/gc-pacer.ts).
          processPacer.count(piece.byteLength)
        }
        if (seq !== pieces || written !== body.size) throw new Error('the spooled message changed size')
        await enqueue(jobs, tx, row!.id, deferJob ? INLINE_FALLBACK_SECONDS : 0)
        return row!.id
      })
    },

    async load(id: string): Promise<StoredMessage | null> {
      loadQuery ??= loadById()
      const rows = await loadQuery.execute({ id })
      const row = rows[0]
      if (row === undefined) return null
      // postgres.js gives a Buffer (a Uint8Array already): not copied again.
      return row
    },

    /**
     * A worker batch's messages in one statement (src/jobs/ingest-batch.ts), in no particular order.
     * The bytes come only of messages up to `inlineBytes` (a bytea travels as hex text twice its
     * size: a batch of 1 MiB messages would hold ~50 MB at once); a larger one has `raw` withheld
     * (`withheld: true`) and is loaded on its own when its turn comes.
     */
    async loadMany(ids: string[], inlineBytes: number): Promise<(StoredMessage & { withheld: boolean })[]> {
      if (ids.length === 0) return []
      const rows = await db
        .select({
          ...getTableColumns(ingestMessages),
          raw: sql<Uint8Array | null>`case when ${ingestMessages.size} <= ${inlineBytes} then ${ingestMessages.raw} end`,
          withheld: sql<boolean>`${ingestMessages.size} > ${inlineBytes} and ${ingestMessages.raw} is not null`,
        })
        .from(ingestMessages)
        .where(inArray(ingestMessages.id, ids))
      return rows
    },

    /** The message's bytes in order, one piece read at a time (the worker streams them). */
    async *body(message: StoredMessage): AsyncGenerator<Uint8Array> {
      if (message.raw !== null) {
        yield message.raw
        return
      }
      for (let seq = 0; seq < message.pieces; seq++) {
        const rows = await db
          .select({ hex: sql<string>`encode(${ingestMessagePieces.bytes}, 'hex')` })
          .from(ingestMessagePieces)
          .where(and(eq(ingestMessagePieces.messageId, message.id), eq(ingestMessagePieces.seq, seq)))
        const hex = rows[0]?.hex
        if (hex === undefined) throw new Error(`message ${message.id} lacks piece ${seq}`)
        const bytes: Uint8Array = Buffer.from(hex, 'hex')
        processPacer.count(bytes.byteLength)
        yield bytes
      }
    },

    markProcessed(id: string, outcome: unknown, now: Date) {
      return store.markProcessedMany([{ id, outcome }], now)
    },

    /** Marks a batch's messages processed in one statement (the worker's batches, src/jobs/ingest.ts). */
    async markProcessedMany(items: { id: string; outcome: unknown }[], now: Date) {
      if (items.length === 0) return
      await db.execute(sql`update ingest_messages m
        set status = 'processed', outcome = v.outcome, processed_at = ${now.toISOString()}::timestamptz,
          quarantine_code = null, quarantine_reason = null
        from unnest(${pgArray(items.map((i) => i.id))}::uuid[],
          ${pgArray(items.map((i) => JSON.stringify(withDamageMarked(i.outcome))))}::jsonb[]) as v(id, outcome)
        where m.id = v.id`)
    },

    async quarantine(id: string, reason: { code: string; message: string; domain?: string }, now: Date) {
      const waitsFor = reason.code === 'domain_not_verified' ? (reason.domain ?? null) : null
      const park = (on: Db | Tx) =>
        on
          .update(ingestMessages)
          .set({
            status: 'quarantined',
            quarantineCode: reason.code,
            quarantineReason: markedText(reason.message),
            quarantineDomain: waitsFor,
            processedAt: now,
          })
          .where(eq(ingestMessages.id, id))
      if (waitsFor === null || boss === null) {
        await park(db)
        return
      }
      await db.transaction(async (tx) => {
        // The domain row, shared-locked, orders this against a verification (which updates that row
        // before re-queueing the domain's waiting messages, pg-domain-verification.ts): either the
        // verification committed first and the message goes straight back to the queue, or it sees
        // this message quarantined. No message can miss the verification it waited for.
        const rows = rowsOf<{ verified: boolean }>(
          await tx.execute(sql`select d.verified_at is not null as verified
            from domains d join ingest_messages m on m.account_id = d.account_id
            where m.id = ${id} and d.name = ${waitsFor} for share of d`),
        )
        if (rows[0]?.verified) await enqueue(boss, tx, id)
        else await park(tx)
      })
    },

    /** How many of the account's messages wait for `domain` to be verified (the domain page). */
    async waitingFor(accountId: string, domain: string): Promise<number> {
      const rows = await db
        .select({ total: count() })
        .from(ingestMessages)
        .where(
          and(
            eq(ingestMessages.accountId, accountId),
            eq(ingestMessages.status, 'quarantined'),
            eq(ingestMessages.quarantineCode, 'domain_not_verified'),
            eq(ingestMessages.quarantineDomain, domain),
          ),
        )
      return rows[0]?.total ?? 0
    },

    async listQuarantine(accountId: string, page: PageRequest) {
      const where = and(eq(ingestMessages.accountId, accountId), eq(ingestMessages.status, 'quarantined'))
      const [rows, totals] = await Promise.all([
        db
          .select({
            id: ingestMessages.id,
            source: ingestMessages.source,
            recipient: ingestMessages.recipient,
            size: ingestMessages.size,
            receivedAt: ingestMessages.receivedAt,
            code: ingestMessages.quarantineCode,
            reason: ingestMessages.quarantineReason,
          })
          .from(ingestMessages)
          .where(where)
          .orderBy(desc(ingestMessages.receivedAt))
          .limit(page.perPage)
          .offset(offsetOf(page)),
        db.select({ total: count() }).from(ingestMessages).where(where),
      ])
      return {
        items: rows.map((r) => ({
          ...r,
          code: r.code ?? 'unknown',
          reason: r.reason ?? '',
        })) as QuarantinedMessage[],
        total: totals[0]?.total ?? 0,
      }
    },

    /** Puts a quarantined message back in the queue (same transaction); false when not quarantined here. */
    async retry(accountId: string, id: string): Promise<boolean> {
      if (!/^[0-9a-f-]{36}$/i.test(id)) return false
      const jobs = queue()
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(ingestMessages)
          .set({ status: 'pending', quarantineCode: null, quarantineReason: null, quarantineDomain: null })
          .where(
            and(
              eq(ingestMessages.accountId, accountId),
              eq(ingestMessages.id, id),
              eq(ingestMessages.status, 'quarantined'),
            ),
          )
          .returning({ id: ingestMessages.id })
        if (rows.length === 0) return false
        await enqueue(jobs, tx, id)
        return true
      })
    },
  }
  return store satisfies IngestMessageStore & QuarantineStore & JobMessageStore
}

/** Up to one piece's worth of bytes, in one array. */
async function joined(pieces: AsyncIterable<Uint8Array>, size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size)
  let at = 0
  for await (const piece of pieces) {
    if (at + piece.byteLength > size) throw new Error('the spooled message changed size')
    out.set(piece, at)
    at += piece.byteLength
  }
  if (at !== size) throw new Error('the spooled message changed size')
  return out
}

/** The bytes regrouped into pieces of `size` (the last one shorter). */
async function* regroup(source: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  let piece = new Uint8Array(size)
  let filled = 0
  for await (const chunk of source) {
    let at = 0
    while (at < chunk.byteLength) {
      const take = Math.min(size - filled, chunk.byteLength - at)
      piece.set(chunk.subarray(at, at + take), filled)
      filled += take
      at += take
      if (filled === size) {
        yield piece
        piece = new Uint8Array(size)
        filled = 0
      }
    }
  }
  if (filled > 0) yield piece.subarray(0, filled)
}
