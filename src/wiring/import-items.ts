import type { ImportedReport, ImportOutcome } from '../../domain/ingest/import-outcome.ts'
import type { IntakeSource, SpooledMessage } from '../../domain/ingest/intake.ts'
import type { Failure } from '../../domain/shared/result.ts'
import { fileKind } from '../../infrastructure/mail/file-kind.ts'
import { splitMbox } from '../../infrastructure/mail/mbox.ts'
import { firstBytes } from '../../infrastructure/mail/message-spool.ts'
import { SNIFF_BYTES } from '../../infrastructure/mail/sniff.ts'
import type { IngestNow } from './ingest-now.ts'

// One file a person hands over (`cli import`, the dashboard upload), whatever it is: a bare report,
// an email (.eml) or an mbox, told by its first bytes (file-kind.ts). Each report or message in it
// goes through intake and processing (ingest-now.ts) and comes back as one item with its outcome.

export type ItemStatus = 'stored' | 'duplicate' | 'quarantined' | 'pending' | 'skipped' | 'refused' | 'failed'

export interface ImportItem {
  status: ItemStatus
  /** The file, and "#n" for the n-th message of an mbox. */
  label: string
  detail: string
  /** The quarantine reason's code. */
  code?: string
}

export interface ImportContext {
  importer: IngestNow
  accountId: string
  source: IntakeSource
  /** INGEST_MAX_MESSAGE_BYTES: one report file or message. */
  maxBytes: number
}

export const NOT_IMPORTABLE = 'not a report file, an email or an mbox'

function describeReport(report: ImportedReport): string {
  if (report.status === 'quarantined') return `${report.code}: ${report.message}`
  const what = [report.kind, report.domain ?? '?']
  if (report.reporter) what.push(`from ${report.reporter}`)
  if (report.reportId) what.push(`report ${report.reportId}`)
  if (report.records !== null) what.push(`${report.records} ${report.records === 1 ? 'record' : 'records'}`)
  return what.join(' ')
}

export function itemOf(label: string, outcome: ImportOutcome): ImportItem {
  if (outcome.status === 'pending')
    return { status: 'pending', label, detail: 'accepted; the queue will process it (storage was busy)' }
  if (outcome.status === 'quarantined') {
    const reason = outcome.quarantine!
    return { status: 'quarantined', label, detail: `${reason.code}: ${reason.message}`, code: reason.code }
  }
  return { status: outcome.status, label, detail: outcome.reports.map(describeReport).join('; ') }
}

const tooLarge = (maxBytes: number) => `larger than INGEST_MAX_MESSAGE_BYTES (${maxBytes} bytes)`

function failureText(failure: Failure, maxBytes: number): string {
  if (failure.code === 'payload_too_large') return tooLarge(maxBytes)
  if (failure.code === 'validation_failed') return failure.message
  return failure.code
}

async function importOne(
  ctx: ImportContext,
  label: string,
  raw: Uint8Array | SpooledMessage,
): Promise<ImportItem> {
  if ((raw instanceof Uint8Array ? raw.byteLength : raw.size) === 0)
    return { status: 'skipped', label, detail: 'empty message' }
  const result = await ctx.importer({ raw, recipient: null, source: ctx.source, accountId: ctx.accountId })
  if (!result.ok) return { status: 'refused', label, detail: failureText(result.failure, ctx.maxBytes) }
  return itemOf(label, result.value)
}

/**
 * The items of one file (a Blob: a file on disk through Bun.file; or a spooled upload, never held
 * whole). An mbox is read as a stream, a message at a time; anything else whole, up to `maxBytes`
 * (a spooled file stays spooled: intake takes it as it is).
 */
export async function* importBlob(
  ctx: ImportContext,
  label: string,
  blob: Blob | SpooledMessage,
  /** Bytes of an mbox read so far (a progress bar), called as it streams. */
  reading?: (bytes: number) => void,
): AsyncGenerator<ImportItem> {
  const head =
    blob instanceof Blob
      ? new Uint8Array(await blob.slice(0, SNIFF_BYTES).arrayBuffer())
      : await firstBytes(blob, SNIFF_BYTES)
  if (head.byteLength === 0) {
    yield { status: 'skipped', label, detail: 'empty file' }
    return
  }
  const kind = fileKind(head)
  if (kind === null) {
    yield { status: 'skipped', label, detail: NOT_IMPORTABLE }
    return
  }
  if (kind === 'mbox') {
    let n = 0
    const stream =
      blob instanceof Blob ? (blob.stream() as unknown as AsyncIterable<Uint8Array>) : blob.pieces()
    async function* counted() {
      let read = 0
      for await (const chunk of stream) {
        read += chunk.byteLength
        reading?.(read)
        yield chunk
      }
    }
    for await (const message of splitMbox(counted(), ctx.maxBytes)) {
      const item = `${label} #${++n}`
      if (message.ok) yield await importOne(ctx, item, message.raw)
      else yield { status: 'refused', label: item, detail: tooLarge(ctx.maxBytes) }
    }
    if (n === 0) yield { status: 'skipped', label, detail: 'an mbox without messages' }
    return
  }
  if (blob.size > ctx.maxBytes) {
    yield { status: 'refused', label, detail: tooLarge(ctx.maxBytes) }
    return
  }
  yield await importOne(ctx, label, blob instanceof Blob ? new Uint8Array(await blob.arrayBuffer()) : blob)
}

const ORDER: ItemStatus[] = ['stored', 'duplicate', 'quarantined', 'pending', 'skipped', 'refused', 'failed']

/** Counts by outcome (stored, duplicate and quarantined always; the others when there are any). */
export function countItems(items: ImportItem[]): {
  counts: [ItemStatus, number][]
  reasons: [string, number][]
} {
  const counts = new Map<ItemStatus, number>()
  const reasons = new Map<string, number>()
  for (const item of items) {
    counts.set(item.status, (counts.get(item.status) ?? 0) + 1)
    if (item.code !== undefined) reasons.set(item.code, (reasons.get(item.code) ?? 0) + 1)
  }
  return {
    counts: ORDER.filter((s) => ['stored', 'duplicate', 'quarantined'].includes(s) || counts.has(s)).map(
      (s) => [s, counts.get(s) ?? 0],
    ),
    reasons: [...reasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
  }
}
