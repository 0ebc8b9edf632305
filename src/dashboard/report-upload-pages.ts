import { Elysia } from 'elysia'
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
// the results. The body is read under INGEST_MAX_MESSAGE_BYTES (plugins/body-limit.ts).

/** A file name to show: no control characters, no path, bounded. */
function labelOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? ''
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200)
  return clean === '' ? 'file' : clean
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
        const files = body instanceof FormData ? body.getAll('files').filter((f) => f instanceof Blob) : []
        if (files.length === 0) {
          const error = 'Choose at least one file.'
          if (wantsJson) return Response.json({ error: 'validation_failed', message: error }, { status: 400 })
          return htmlResponse(uploadView({ viewer, maxBytes, results: null, error }), { status: 400 })
        }
        const context = {
          importer: s.importReport,
          accountId: session.accountId,
          source: 'dashboard' as const,
          maxBytes,
        }
        const items: ImportItem[] = []
        for (const file of files) {
          const name = labelOf(file instanceof File ? file.name : '')
          for await (const item of importBlob(context, name, file)) items.push(item)
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
