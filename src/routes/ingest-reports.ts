import { Elysia, t } from 'elysia'
import type { ImportOutcome } from '../../domain/ingest/import-outcome.ts'
import { firstBytes } from '../../infrastructure/mail/message-spool.ts'
import { SNIFF_BYTES, sniffFormat } from '../../infrastructure/mail/sniff.ts'
import { apiModels, authErrors, enumOf, ResponseInt } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { FailureError, unwrap } from '../../plugins/failures.ts'
import type { IngestNow } from '../wiring/ingest-now.ts'
import { withSpooledBody } from './spooled-body.ts'

// POST /api/v1/ingest/reports: one bare report file (aggregate XML, gzip, zip, TLS-RPT JSON) for the
// token's account, as people hold them in a folder or another tool's archive. It goes through the
// pipeline report mail goes through (stored as an intake message, same limits, dedup and
// quarantine) and is processed before the answer, so the caller learns what became of it
// (docs/ingestion.md, docs/api.md).

const StoredReport = t.Object({
  status: enumOf(['stored', 'duplicate']),
  kind: enumOf(['aggregate', 'tls-rpt', 'forensic']),
  id: ResponseInt({ description: 'The stored report (GET /domains/{name}/reports/{id} for an aggregate)' }),
  report_id: t.Nullable(t.String()),
  domain: t.Nullable(t.String()),
  reporter: t.Nullable(t.String()),
  records: t.Nullable(ResponseInt({ description: 'Records stored (a new aggregate report)' })),
})
const QuarantinedReport = t.Object({
  status: t.Literal('quarantined'),
  code: t.String({ examples: ['domain_not_in_account'] }),
  message: t.String(),
})

export const ImportResultModel = t.Object({
  data: t.Object({
    id: t.String({
      format: 'uuid',
      description: 'The intake message; a quarantined one is listed by GET /ingest/quarantine',
    }),
    status: enumOf(['stored', 'duplicate', 'quarantined', 'pending']),
    reports: t.Array(t.Union([StoredReport, QuarantinedReport])),
    quarantine: t.Nullable(t.Object({ code: t.String(), message: t.String() })),
  }),
})

/** The API's (and the dashboard upload's) JSON for an outcome. */
export function importResultBody(outcome: ImportOutcome) {
  return {
    data: {
      id: outcome.id,
      status: outcome.status,
      reports: outcome.reports.map((r) =>
        r.status === 'quarantined'
          ? r
          : {
              status: r.status,
              kind: r.kind as 'aggregate' | 'tls-rpt' | 'forensic',
              id: r.id,
              report_id: r.reportId,
              domain: r.domain,
              reporter: r.reporter,
              records: r.records,
            },
      ),
      quarantine: outcome.quarantine,
    },
  }
}

/** 201 when a report was new, 202 when it waits for the queue, 200 otherwise. */
export const importHttpStatus = (outcome: ImportOutcome) =>
  outcome.status === 'stored' ? 201 : outcome.status === 'pending' ? 202 : 200

export const NOT_A_REPORT =
  'The body is not a report file: expected DMARC aggregate XML, gzip or zip, or TLS-RPT JSON (an email goes to POST /ingest/messages).'

export interface IngestReportRouteDeps {
  importReport: IngestNow
  auth: AuthDeps
  maxMessageBytes: number
}

export function ingestReportRoutes(deps: IngestReportRouteDeps) {
  return new Elysia({ name: 'routes:ingest-reports', prefix: '/ingest', detail: { tags: ['Report intake'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({ IngestReportResult: ImportResultModel })
    .post(
      '/reports',
      async ({ principal, request, status }) => {
        // Spooled, not held, as POST /ingest/messages is (docs/ingestion.md, "Memory"): a 64 MB
        // file costs a megabyte here, however many arrive at once.
        const outcome = await withSpooledBody(request, deps.maxMessageBytes, async (spool) => {
          if (spool.size === 0) {
            const message = 'The body is empty.'
            throw new FailureError({ code: 'validation_failed', message, errors: { body: [message] } })
          }
          // Told by content (sniff.ts), whatever the Content-Type says; anything else is refused,
          // not stored: there is nothing in it to retry.
          if (sniffFormat(await firstBytes(spool, 2 * SNIFF_BYTES)) === null) {
            throw new FailureError({
              code: 'validation_failed',
              message: NOT_A_REPORT,
              errors: { body: [NOT_A_REPORT] },
            })
          }
          return unwrap(
            await deps.importReport({
              raw: spool,
              recipient: null,
              source: 'http',
              accountId: principal.accountId,
            }),
          )
        })
        return status(importHttpStatus(outcome), importResultBody(outcome))
      },
      {
        auth: true,
        parse: 'none',
        response: {
          200: 'IngestReportResult',
          201: 'IngestReportResult',
          202: 'IngestReportResult',
          ...authErrors,
          413: 'Error',
        },
        detail: {
          summary: 'Submit one report file (aggregate XML, .xml.gz, .zip, TLS-RPT JSON)',
          description:
            'The body is the file as it is; its type is told by its first bytes (gzip, zip, XML, JSON), not by Content-Type. The report goes to the token’s account and is processed before the answer: 201 `stored` (a new report), 200 `duplicate` (stored before) or `quarantined` (with the reason; it stays in GET /ingest/quarantine for a retry, e.g. a domain not in the account or not verified), 202 `pending` if storage failed for now and the queue will process it. A body that is no report file is 400; one over INGEST_MAX_MESSAGE_BYTES is 413.',
        },
      },
    )
}
