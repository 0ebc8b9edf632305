import type { AggregateEvent, AggregateMetadata, AggregateRecord } from '../reports/aggregate-types.ts'
import type { AggregateReportWriter, RecordOutcome } from '../reports/store-aggregate.ts'

// What happens to an accepted message, in a job that may be retried: extract the reports, parse
// and store each, then mark the message processed — or quarantine it with a precise reason. A
// parse problem is permanent (quarantine, no retry); a storage problem throws (the job retries).
// Storage is idempotent (duplicates are acknowledged), so a retry after a crash stores nothing twice.

export interface QuarantineReason {
  code: string
  message: string
  /** For `domain_not_verified`: the account's domain the message waits for (docs/ingestion.md). */
  domain?: string
}

export type AggregatePayload = { kind: 'aggregate'; name: string; open(): AsyncIterable<Uint8Array> }
export type OtherPayload = {
  kind: 'forensic' | 'tls-rpt'
  name: string
  store(ctx: PayloadContext): Promise<PayloadOutcome>
}
export type Payload = AggregatePayload | OtherPayload

export interface PayloadContext {
  accountId: string
  messageId: string
  /** The account's domain a report's policy domain belongs to, if verified (docs/ingestion.md). */
  resolveDomain(policyDomain: string): Promise<DomainMatch>
}

export type DomainMatch =
  | { ok: true; domainId: number; name: string }
  | { ok: false; reason: QuarantineReason }

export type PayloadOutcome =
  | { status: 'stored' | 'duplicate'; kind: string; id: number; detail?: Record<string, unknown> }
  | { status: 'quarantine'; reason: QuarantineReason }

export interface ProcessDeps {
  /**
   * Reads the message (as a stream: docs/ingestion.md, "Memory") and hands each payload to `each`
   * as it is reached; the message is read on once `each` resolved. A failure of the whole message
   * may come after payloads were handed over.
   */
  extract(
    message: AsyncIterable<Uint8Array>,
    each: (payload: Payload) => Promise<void>,
  ): Promise<{ ok: true } | { ok: false; reason: QuarantineReason }>
  parseAggregate(chunks: AsyncIterable<Uint8Array>): AsyncIterable<AggregateEvent>
  /** An incremental hash of the decompressed report (content deduplication). */
  hasher(): { update(bytes: Uint8Array): void; digest(): string }
  evaluate(record: AggregateRecord, metadata: AggregateMetadata): RecordOutcome
  aggregates: AggregateReportWriter
}

/** Thrown by a payload's stream for a permanent problem (a decompression bomb, corrupt data). */
export class PayloadFailure extends Error {
  constructor(readonly reason: QuarantineReason) {
    super(reason.message)
    this.name = 'PayloadFailure'
  }
}

class ParseFailure extends PayloadFailure {}

async function storeAggregate(
  deps: ProcessDeps,
  payload: AggregatePayload,
  ctx: PayloadContext,
): Promise<PayloadOutcome> {
  const hash = deps.hasher()
  async function* hashed() {
    for await (const chunk of payload.open()) {
      hash.update(chunk)
      yield chunk
    }
  }
  const events = deps.parseAggregate(hashed())[Symbol.asyncIterator]()
  let first: IteratorResult<AggregateEvent>
  try {
    first = await events.next()
  } catch (error) {
    if (error instanceof PayloadFailure) return { status: 'quarantine', reason: error.reason }
    throw error
  }
  if (first.done)
    return {
      status: 'quarantine',
      reason: { code: 'empty', message: `${payload.name}: the report is empty.` },
    }
  if (first.value.type === 'error')
    return {
      status: 'quarantine',
      reason: { ...first.value.error, message: `${payload.name}: ${first.value.error.message}` },
    }
  if (first.value.type !== 'metadata') {
    return {
      status: 'quarantine',
      reason: { code: 'missing_field', message: `${payload.name}: records before report metadata.` },
    }
  }
  const metadata = first.value.metadata
  const domain = await ctx.resolveDomain(metadata.policy.domain)
  if (!domain.ok) return { status: 'quarantine', reason: domain.reason }
  async function* records() {
    while (true) {
      const next = await events.next()
      if (next.done) return
      if (next.value.type === 'record') yield next.value.record
      else if (next.value.type === 'error')
        throw new ParseFailure({
          ...next.value.error,
          message: `${payload.name}: ${next.value.error.message}`,
        })
    }
  }
  try {
    const result = await deps.aggregates.write({
      accountId: ctx.accountId,
      domainId: domain.domainId,
      messageId: ctx.messageId,
      metadata,
      records: records(),
      evaluate: (record) => deps.evaluate(record, metadata),
      contentHash: () => hash.digest(),
    })
    return {
      status: result.status,
      kind: 'aggregate',
      id: result.reportId,
      detail: {
        report_id: metadata.reportId,
        reporter: metadata.orgName,
        domain: domain.name,
        ...(result.status === 'stored' ? { records: result.records, messages: result.messages } : {}),
      },
    }
  } catch (error) {
    if (error instanceof PayloadFailure) return { status: 'quarantine', reason: error.reason }
    throw error
  }
}

/** Processes one message's payloads; any quarantine reason quarantines the message (nothing is dropped). */
export async function processPayloads(
  deps: ProcessDeps,
  message: AsyncIterable<Uint8Array>,
  ctx: PayloadContext,
): Promise<
  | { ok: true; outcomes: PayloadOutcome[] }
  | { ok: false; reason: QuarantineReason; outcomes: PayloadOutcome[] }
> {
  const outcomes: PayloadOutcome[] = []
  // Each payload is stored while the message waits, so a report is never held whole.
  const extracted = await deps.extract(message, async (payload) => {
    const outcome =
      payload.kind === 'aggregate' ? await storeAggregate(deps, payload, ctx) : await payload.store(ctx)
    outcomes.push(outcome)
  })
  // A message that cannot be read (a MIME limit) is quarantined even if reports came before the
  // trouble; those are stored already and acknowledged as duplicates on a retry.
  if (!extracted.ok) return { ok: false, reason: extracted.reason, outcomes }
  const failed = outcomes.find((o) => o.status === 'quarantine')
  if (failed !== undefined && failed.status === 'quarantine')
    return { ok: false, reason: failed.reason, outcomes }
  return { ok: true, outcomes }
}
