import { Elysia } from 'elysia'
import { type Spool, spoolMessage } from '../../infrastructure/mail/message-spool.ts'
import { FailureError } from '../../plugins/failures.ts'
import { formParts, MultipartError, StreamedForm } from '../../plugins/multipart.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import { type ImportItem, importBlob } from '../wiring/import-items.ts'
import { noteAccount, viewerOf } from './guards.ts'
import { htmlResponse, messagePage } from './layout.ts'
import { countsText, uploadView } from './report-upload-views.ts'
import type { DashboardServices } from './services.ts'

// GET /reports/upload and its form (multipart/form-data, session + CSRF like every dashboard
// form). Each file goes through the intake and processing of POST /api/v1/ingest/reports
// (src/wiring/import-items.ts), so the answer says what became of it. A request asking for JSON
// (assets/upload.js, one file per request) gets the items as JSON; a plain form post gets the page back with
// the results. The body is read under INGEST_MAX_MESSAGE_BYTES and never held whole
// (docs/ingestion.md, "Memory"): the body parser reads the form's fields before its first file (the
// CSRF token; plugins/body-limit.ts), and the files are spooled here (uploadedFiles).

/** A file name to show: no control characters, no path, bounded. */
function labelOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? ''
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200)
  return clean === '' ? 'file' : clean
}

const CUT_OFF = 'The upload is not a complete multipart/form-data body.'

/**
 * The files of an upload, each in a spool of its own, in order. The whole body is spooled first, at
 * the speed it arrives: a body left unread while a file is processed would stall its sender, and
 * Bun ends a request whose body pauses for 10 s. Each spool is discarded once the caller moves on.
 */
async function* uploadedFiles(form: StreamedForm, maxBytes: number): AsyncGenerator<[string, Spool]> {
  const whole = await spoolMessage(form.body, { maxBytes })
  if (!whole.ok) throw new FailureError({ code: 'payload_too_large', limit: maxBytes })
  try {
    for await (const part of formParts(whole.spool.pieces(), form.boundary)) {
      if (part.name !== 'files' || part.filename === null) continue
      // Within the body, so never over the limit.
      const file = await spoolMessage(part.body, { maxBytes })
      if (!file.ok) throw new FailureError({ code: 'payload_too_large', limit: maxBytes })
      try {
        yield [labelOf(part.filename), file.spool]
      } finally {
        await file.spool.discard()
      }
    }
  } catch (error) {
    if (!(error instanceof MultipartError)) throw error
    throw new FailureError({ code: 'validation_failed', message: CUT_OFF, errors: { body: [CUT_OFF] } })
  } finally {
    await whole.spool.discard()
  }
}

export function uploadPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const maxBytes = s.config.ingestMaxMessageBytes
  return new Elysia({ name: 'dashboard:report-upload' })
    .use(sessions)
    .get(
      '/reports/upload',
      ({ session, request }) => {
        noteAccount(request, session)
        return htmlResponse(uploadView({ viewer: viewerOf(session), maxBytes, results: null, error: null }))
      },
      { session: true },
    )
    .post(
      '/reports/upload',
      async ({ session, request, body }) => {
        noteAccount(request, session)
        const viewer = viewerOf(session)
        const wantsJson = /application\/json/.test(request.headers.get('accept') ?? '')
        if (s.importReport === null || s.boss === null) {
          const message = 'This server runs without the job queue, so reports cannot be taken in here.'
          if (wantsJson) return Response.json({ error: 'unavailable', message }, { status: 503 })
          return messagePage({ status: 503, title: 'Report intake is not running', message, viewer })
        }
        const context = {
          importer: s.importReport,
          accountId: session.accountId,
          source: 'dashboard' as const,
          maxBytes,
        }
        const items: ImportItem[] = []
        let files = 0
        if (body instanceof StreamedForm) {
          for await (const [name, file] of uploadedFiles(body, maxBytes)) {
            files++
            for await (const item of importBlob(context, name, file)) items.push(item)
          }
        }
        if (files === 0) {
          const error = 'Choose at least one file.'
          if (wantsJson) return Response.json({ error: 'validation_failed', message: error }, { status: 400 })
          return htmlResponse(uploadView({ viewer, maxBytes, results: null, error }), { status: 400 })
        }
        if (wantsJson) {
          return Response.json(
            { data: { items, summary: countsText(items) } },
            { headers: { 'cache-control': 'no-store' } },
          )
        }
        return htmlResponse(uploadView({ viewer, maxBytes, results: items, error: null }))
      },
      { session: true, csrf: true },
    )
}
