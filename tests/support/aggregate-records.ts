import type { AggregateRecord } from '../../domain/reports/aggregate-types.ts'

/** An aggregate report record for storage and rollup tests; override what a test cares about. */
export function aggregateRecord(sourceIp: string, overrides: Partial<AggregateRecord> = {}): AggregateRecord {
  return {
    sourceIp,
    count: 1,
    disposition: 'none',
    dkimEvaluated: null,
    spfEvaluated: null,
    reasons: [],
    headerFrom: 'example.com',
    envelopeFrom: null,
    envelopeTo: null,
    dkim: [],
    spf: [],
    ...overrides,
  }
}

/** Records as the writer takes them: a stream, as the parser yields them. */
export async function* streamOf<T>(records: Iterable<T>): AsyncGenerator<T> {
  yield* records
}
