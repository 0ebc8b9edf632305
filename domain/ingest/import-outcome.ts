import type { PayloadOutcome, QuarantineReason } from './process-message.ts'

// What a caller processing a message inline (POST /ingest/reports, `cli import`, the dashboard
// upload) is told: one status for the whole file and a line per report in it (docs/ingestion.md).

export type ImportStatus = 'stored' | 'duplicate' | 'quarantined' | 'pending'

export type ImportedReport =
  | {
      status: 'stored' | 'duplicate'
      kind: string
      id: number
      reportId: string | null
      domain: string | null
      reporter: string | null
      records: number | null
    }
  | { status: 'quarantined'; code: string; message: string }

export interface ImportOutcome {
  /** The intake message (GET /ingest/quarantine lists it when quarantined). */
  id: string
  status: ImportStatus
  reports: ImportedReport[]
  quarantine: QuarantineReason | null
}

export type ProcessedMessage =
  | { status: 'processed'; outcomes: PayloadOutcome[] }
  | { status: 'quarantined'; reason: QuarantineReason; outcomes: PayloadOutcome[] }
  /** Not processed here (a storage error; the queued job will) or no longer pending. */
  | { status: 'pending' }

const text = (value: unknown) => (typeof value === 'string' ? value : null)

function report(outcome: PayloadOutcome): ImportedReport {
  if (outcome.status === 'quarantine') return { status: 'quarantined', ...outcome.reason }
  const detail = outcome.detail ?? {}
  return {
    status: outcome.status,
    kind: outcome.kind,
    id: outcome.id,
    reportId: text(detail.report_id),
    domain: text(detail.domain),
    reporter: text(detail.reporter),
    records: typeof detail.records === 'number' ? detail.records : null,
  }
}

/**
 * Stored when any report in the file was new; duplicate when every one was stored before; the
 * message's quarantine wins over both (its stored reports are still listed).
 */
export function importOutcome(id: string, processed: ProcessedMessage): ImportOutcome {
  if (processed.status === 'pending') return { id, status: 'pending', reports: [], quarantine: null }
  const reports = processed.outcomes.map(report)
  if (processed.status === 'quarantined')
    return { id, status: 'quarantined', reports, quarantine: processed.reason }
  const fresh = reports.some((r) => r.status === 'stored')
  return { id, status: fresh ? 'stored' : 'duplicate', reports, quarantine: null }
}
