import { Elysia, t } from 'elysia'
import type { AcceptMessage } from '../../domain/ingest/intake.ts'
import { type QuarantineStore, retryQuarantined } from '../../domain/ingest/quarantine.ts'
import { concurrencyLimit } from '../../domain/shared/concurrency-limit.ts'
import { pageMeta } from '../../domain/shared/pagination.ts'
import { readAll } from '../../infrastructure/mail/extract-reports.ts'
import { gunzipStream } from '../../infrastructure/mail/gzip-stream.ts'
import { firstBytes } from '../../infrastructure/mail/message-spool.ts'
import { apiModels, authErrors, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { pageRequest } from '../../plugins/envelope.ts'
import { FailureError, unwrap } from '../../plugins/failures.ts'
import { IdText, Line } from '../../plugins/input-schemas.ts'
import { withSpooledBody } from './spooled-body.ts'

const QuarantineModel = t.Object({
  id: t.String({ format: 'uuid' }),
  source: t.String(),
  recipient: t.Nullable(t.String()),
  size: t.Integer(),
  received_at: t.String({ format: 'date-time' }),
  code: t.String({ examples: ['limit_exceeded'] }),
  reason: t.String(),
})

// A TLS-RPT report is a few KB; 16 MB decompressed is far beyond any real one.
const TLS_RPT_LIMITS = {
  maxDecompressedBytes: 16 * 1024 * 1024,
  maxZipEntries: 1,
  maxCompressionRatio: 1000,
  maxParts: 1,
}

/** A TLS-RPT body is never larger than what it decompresses to (body-limit.ts refuses more up front). */
export const tlsRptBodyBytes = (maxMessageBytes: number) =>
  Math.min(maxMessageBytes, TLS_RPT_LIMITS.maxDecompressedBytes)

export interface IngestRouteDeps {
  /** Stores a TLS-RPT report (JSON text) for an account: RFC 8460 §6.4 HTTPS submission. */
  storeTlsReport: (
    accountId: string,
    json: string,
  ) => Promise<
    { ok: true; status: 'stored' | 'duplicate'; id: number } | { ok: false; code: string; message: string }
  >
  accept: AcceptMessage
  messages: Pick<QuarantineStore, 'listQuarantine' | 'retry'>
  auth: AuthDeps
  ingestDomain: string
  ingestSecret: string | null
  maxMessageBytes: number
  reportAddress: (accountId: string) => Promise<string>
  /**
   * Told the size a message declares (Content-Length) before it is read, so that work it will need
   * starts meanwhile: a report process for a large one (src/compose/report-processes.ts).
   */
  arriving?: (bytes: number) => void
}

export function ingestRoutes(deps: IngestRouteDeps) {
  const tlsBodyBytes = tlsRptBodyBytes(deps.maxMessageBytes)
  const tlsGate = concurrencyLimit(2)
  return (
    new Elysia({ name: 'routes:ingest', prefix: '/ingest', detail: { tags: ['Report intake'] } })
      .use(apiModels)
      .use(authPlugin({ ...deps.auth, intakeSecret: deps.ingestSecret }))
      .model({
        IngestAddress: t.Object({
          data: t.Object({
            address: t.String({ examples: ['r5k2...@reports.example.net'] }),
            rua: t.String(),
            ruf: t.String(),
          }),
        }),
        IngestAccepted: t.Object({
          data: t.Object({ id: t.String({ format: 'uuid' }), status: t.Literal('accepted') }),
        }),
        QuarantineList: t.Object({ data: t.Array(QuarantineModel), meta: PageMeta }),
        QuarantineRetry: t.Object({ data: t.Object({ id: t.String(), status: t.Literal('pending') }) }),
        TlsRptStored: t.Object({
          data: t.Object({ id: t.Integer(), status: t.UnionEnum(['stored', 'duplicate']) }),
        }),
      })
      .get(
        '/address',
        async ({ principal }) => {
          const address = await deps.reportAddress(principal.accountId)
          return { data: { address, rua: `mailto:${address}`, ruf: `mailto:${address}` } }
        },
        {
          auth: true,
          response: { 200: 'IngestAddress', ...authErrors },
          detail: { summary: 'The account’s report address, for rua= and ruf=' },
        },
      )
      // Raw RFC 5322 intake. Authenticated by an API token (the report goes to its account) or by the
      // operator's intake secret with the envelope recipient, for a mail server serving every account.
      .post(
        '/messages',
        async ({ intake, request, query, status }) => {
          const recipient = query.recipient ?? request.headers.get('x-original-to')
          // The operator's mail server must say who the mail is for; a token decides the account.
          if (intake.kind === 'operator' && !recipient) {
            const message = 'Give the envelope recipient with ?recipient= or X-Original-To.'
            throw new FailureError({ code: 'validation_failed', message, errors: { recipient: [message] } })
          }
          const accountId = intake.kind === 'account' ? intake.principal.accountId : undefined
          const declared = Number(request.headers.get('content-length'))
          if (Number.isSafeInteger(declared) && declared > 0 && declared <= deps.maxMessageBytes)
            deps.arriving?.(declared)
          // Spooled, not held: a 64 MB message costs a megabyte here (docs/ingestion.md, "Memory").
          const accepted = await withSpooledBody(request, deps.maxMessageBytes, async (raw) =>
            unwrap(await deps.accept({ raw, recipient: recipient || null, source: 'http', accountId })),
          )
          return status(202, { data: { id: accepted.id, status: 'accepted' as const } })
        },
        {
          intakeAuth: true,
          parse: 'none',
          query: t.Object({ recipient: t.Optional(Line({ maxLength: 320 })) }),
          response: {
            202: 'IngestAccepted',
            400: 'ValidationError',
            401: 'Error',
            404: 'Error',
            413: 'Error',
            429: 'RateLimitError',
          },
          detail: {
            summary: 'Submit a raw report email (Content-Type: message/rfc822)',
            description:
              'Answers 202 once the message is stored durably; parsing happens in the background. Authenticate with an API token (the report goes to its account) or with the intake secret (INGEST_SECRET) plus the envelope recipient in ?recipient= or X-Original-To. Messages up to INGEST_MAX_MESSAGE_BYTES (64 MB). A bare report file is read too; POST /ingest/reports takes one and answers with its outcome.',
          },
        },
      )
      // RFC 8460 §6.4: reports POSTed over HTTPS as application/tlsrpt+json or application/tlsrpt+gzip.
      .post(
        '/tls-rpt',
        async ({ principal, request, status }) => {
          // Spooled as it arrives (at most TLS_RPT_BODY_BYTES); read whole, decompressed and parsed
          // two at a time, so requests at once cost a spool each, not their bodies (docs/ingestion.md,
          // "Memory").
          const stored = await withSpooledBody(request, tlsBodyBytes, (spool) =>
            tlsGate(async () => {
              // Detected by magic bytes, decompressed under the same caps as mailed reports (gzip bombs).
              const head = await firstBytes(spool, 2)
              const gzipped = head[0] === 0x1f && head[1] === 0x8b
              const bytes = await readAll(
                gzipped ? gunzipStream(spool.pieces(), TLS_RPT_LIMITS) : spool.pieces(),
                TLS_RPT_LIMITS.maxDecompressedBytes,
              )
              if (!bytes.ok) {
                const message = bytes.reason.message
                throw new FailureError({ code: 'validation_failed', message, errors: { body: [message] } })
              }
              return deps.storeTlsReport(principal.accountId, new TextDecoder().decode(bytes.value))
            }),
          )
          if (!stored.ok) {
            throw new FailureError({
              code: 'validation_failed',
              message: stored.message,
              errors: { body: [stored.message] },
            })
          }
          return status(stored.status === 'stored' ? 201 : 200, {
            data: { id: stored.id, status: stored.status },
          })
        },
        {
          auth: true,
          parse: 'none',
          response: { 200: 'TlsRptStored', 201: 'TlsRptStored', ...authErrors, 413: 'Error' },
          detail: {
            summary: 'Submit a TLS-RPT report (RFC 8460 JSON, plain or gzip)',
            description:
              'Stored at once for the account of the token; the policy domain must be a verified domain of the account. A report already stored answers 200 with status duplicate.',
          },
        },
      )
      .get(
        '/quarantine',
        async ({ principal, query }) => {
          const page = pageRequest(query)
          const found = await deps.messages.listQuarantine(principal.accountId, page)
          return {
            data: found.items.map((m) => ({
              id: m.id,
              source: m.source,
              recipient: m.recipient,
              size: m.size,
              received_at: m.receivedAt.toISOString(),
              code: m.code,
              reason: m.reason,
            })),
            meta: pageMeta(found.total, page),
          }
        },
        {
          auth: true,
          query: t.Object(PaginationQuery),
          response: { 200: 'QuarantineList', ...authErrors },
          detail: { summary: 'Messages that could not be processed, with the reason; nothing is dropped' },
        },
      )
      .post(
        '/quarantine/:id/retry',
        async ({ principal, params }) => {
          const { id } = unwrap(
            await retryQuarantined(deps, { accountId: principal.accountId, id: params.id }),
          )
          return { data: { id, status: 'pending' as const } }
        },
        {
          auth: true,
          params: t.Object({ id: IdText() }),
          response: { 200: 'QuarantineRetry', ...authErrors, 404: 'Error' },
          detail: { summary: 'Process a quarantined message again (after a fix)' },
        },
      )
  )
}
