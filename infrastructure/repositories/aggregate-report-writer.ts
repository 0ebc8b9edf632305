import type { PgBoss } from 'pg-boss'
import type { AggregateRecord } from '../../domain/reports/aggregate-types.ts'
import { createRollupAccumulator, type RollupAccumulator } from '../../domain/reports/report-rollup.ts'
import {
  type AggregateReportWriter,
  type AggregateWrite,
  type RecordOutcome,
  reportDay,
} from '../../domain/reports/store-aggregate.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { Database } from '../db/database.ts'
import { triggerReportAlerts } from '../queue/alert-triggers.ts'
import { type CpuSlices, cpuSlices, DEFAULT_SLICE_MS } from '../runtime/cpu-slices.ts'
import { PENDING_COLUMNS, pendingFormat } from './aggregate-pending-line.ts'
import { RECORD_COLUMNS, type RecordItem, recordFormat } from './aggregate-record-line.ts'
import { countDuplicate, type LargeDeps, storeLarge } from './aggregate-report-large.ts'
import {
  bind,
  metadataValues,
  recordValues,
  STORE_SMALL,
  sourceValues,
  totalValues,
} from './aggregate-report-sql.ts'
import { copyRows, statementOf } from './sql-tx.ts'

// Raw SQL on purpose: the same statements run on postgres.js and PGlite. Two paths, chosen by size
// while the records stream in: a small report (most of them) is one statement; a large one is a
// transaction whose records go in with COPY (one stream, not thousands of INSERTs). Either way the
// rollups are computed in memory on the way and written once, never read back from the records.
// A large report's per-source rollup is merged right after its commit (aggregate-report-merge.ts),
// so its totals show as soon as its records are in.

/** Up to this many records a report is buffered and stored in one statement. */
const SMALL_REPORT = 400

async function* toAsync<T>(items: Iterable<T>, slices: CpuSlices): AsyncGenerator<T> {
  for (const item of items) {
    if (slices.due()) await slices.pause()
    yield item
  }
}

async function storeSmall(
  database: Database,
  input: AggregateWrite,
  day: string,
  records: [AggregateRecord, RecordOutcome][],
  rollup: RollupAccumulator,
) {
  const contentHash = input.contentHash()
  const totals = rollup.totals()
  const rows = await statementOf<{ id: number }>(
    database,
    STORE_SMALL.text,
    bind(STORE_SMALL, {
      ...metadataValues(input),
      ...totalValues(totals, rollup.selectors()),
      ...sourceValues([...rollup.sources()]),
      ...recordValues(records),
      day,
      contentHash,
    }),
  )
  if (rows[0] === undefined)
    return { status: 'duplicate' as const, reportId: await countDuplicate(database, input, contentHash) }
  return {
    status: 'stored' as const,
    reportId: Number(rows[0].id),
    records: totals.records,
    messages: totals.messages,
  }
}

export interface AggregateWriterOptions {
  /**
   * The process's queue: a stored report (not a duplicate) enqueues its domain's report rules,
   * debounced (infrastructure/queue/alert-triggers.ts), after the commit, not in it (the small path
   * is one statement, and a job lost to a crash in between is made up by the hourly scheduler); a
   * large report enqueues its merge's safety net in its transaction.
   */
  boss?: PgBoss | null
  /** CPU slices of a large report's stream (WORKER_SLICE_MS; infrastructure/runtime/cpu-slices.ts). */
  sliceMs?: number
  /** Where a merge left to the safety net, or an alert trigger not sent, is told (with a queue only). */
  logger?: Logger
}

export function createAggregateWriter(
  database: Database,
  { boss = null, sliceMs = DEFAULT_SLICE_MS, logger }: AggregateWriterOptions = {},
): AggregateReportWriter {
  const large: LargeDeps = { database, boss, logger }
  const writer = storeAggregate(large, sliceMs)
  if (boss === null) return writer
  return {
    async write(input) {
      const result = await writer.write(input)
      if (result.status === 'stored')
        await triggerReportAlerts(boss, [{ accountId: input.accountId, domainId: input.domainId }], logger)
      return result
    },
  }
}

function storeAggregate(large: LargeDeps, sliceMs: number): AggregateReportWriter {
  const { database } = large
  return {
    async write(input) {
      const day = reportDay(input.metadata.begin)
      // The stream below is CPU work on the thread the API shares (ROLE=all): it pauses for the
      // event loop whenever a slice is spent, so a request waits one slice at most per turn.
      const slices = cpuSlices(sliceMs)
      const rollup = createRollupAccumulator()
      const iterator = input.records[Symbol.asyncIterator]()
      const head: [AggregateRecord, RecordOutcome][] = []
      while (head.length <= SMALL_REPORT) {
        const next = await iterator.next()
        if (next.done) return storeSmall(database, input, day, head, rollup)
        const outcome = input.evaluate(next.value)
        rollup.add(next.value, outcome)
        head.push([next.value, outcome])
      }
      return storeLarge(large, input, day, async (tx, reportId) => {
        async function* items(): AsyncGenerator<RecordItem> {
          yield* head.splice(0)
          while (true) {
            if (slices.due()) await slices.pause()
            const next = await iterator.next()
            if (next.done) return
            const outcome = input.evaluate(next.value)
            rollup.add(next.value, outcome)
            yield [next.value, outcome]
          }
        }
        const format = recordFormat({ reportId, accountId: input.accountId, domainId: input.domainId, day })
        await copyRows(tx, 'aggregate_records', RECORD_COLUMNS, items(), format)
        // Fewer collection hints than for the records (whose parser garbage needs them): every
        // 20,000 sources, the stage took ~30% less time at the same peak RSS; with none, the
        // peak rose by ~25 MB (100,000 sources, docs/ingestion.md).
        await copyRows(
          tx,
          'rollup_pending',
          PENDING_COLUMNS,
          toAsync(rollup.sources(), slices),
          pendingFormat(reportId, input.accountId),
          20_000,
        )
        return { totals: rollup.totals(), selectors: rollup.selectors() }
      })
    },
  }
}
