import { countItems, type ImportItem, type ItemStatus } from '../wiring/import-items.ts'
import { ASSETS } from './assets.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, type Viewer } from './layout.ts'
import { reportLayout } from './report-frame-views.ts'

// /reports/upload: report files from a folder or another tool's archive, many at once. Without a
// script the form posts every file in one request and the answer lists each; with assets/upload.js each file
// goes up on its own, with a progress bar and its result as soon as it is processed.

export const STATUS_BADGE: Record<ItemStatus, string> = {
  stored: 'ok',
  duplicate: 'unknown',
  quarantined: 'warning',
  pending: 'unknown',
  skipped: 'missing',
  refused: 'missing',
  failed: 'missing',
}

function resultRows(items: ImportItem[]): SafeHtml[] {
  return items.map(
    (item) =>
      html`<tr><th scope="row">${item.label}</th><td><span class="badge ${STATUS_BADGE[item.status]}">${item.status}</span></td><td>${item.detail}${item.status === 'quarantined' ? html` <a href="/reports/quarantine">Quarantine</a>` : ''}</td></tr>`,
  )
}

export function countsText(items: ImportItem[]): string {
  const { counts } = countItems(items)
  return `${items.length} ${items.length === 1 ? 'item' : 'items'}: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}`
}

export function uploadView(input: {
  viewer: Viewer
  maxBytes: number
  results: ImportItem[] | null
  error: string | null
}): SafeHtml {
  const { viewer, results } = input
  const mb = Math.floor(input.maxBytes / (1024 * 1024))
  const body = html`<h1>Upload reports</h1>
<p class="lead">Report files you already have, from a folder, a mailbox export or another tool: DMARC aggregate reports (<code>.xml</code>, <code>.xml.gz</code>, <code>.zip</code>), TLS-RPT reports (<code>.json</code>, <code>.json.gz</code>), report emails (<code>.eml</code>) and mailbox files (mbox). Each is processed at once, exactly as if it had been mailed to your report address: a report stored before is a duplicate, and one for a domain that is not in your account or not verified waits in the <a href="/reports/quarantine">quarantine</a>.</p>
${input.error ? html`<div class="error-summary" role="alert"><p>${input.error}</p></div>` : ''}
<form method="post" action="/reports/upload" enctype="multipart/form-data" class="panel" data-upload>
${csrfField(viewer.csrfToken)}
<div><label for="files">Files</label>
<input id="files" name="files" type="file" multiple required aria-describedby="files-hint">
<p class="hint" id="files-hint">Up to ${mb} MB a file. Choose as many as you like.</p></div>
<div><button type="submit">Upload</button></div>
</form>
<section id="upload-results" aria-live="polite"${results === null ? html` hidden` : ''}>
<h2>Results</h2>
<p id="upload-summary">${results === null ? '' : countsText(results)}</p>
<div class="table-scroll"><table>
<caption class="skip">What became of each file</caption>
<thead><tr><th scope="col">File</th><th scope="col">Result</th><th scope="col">Details</th></tr></thead>
<tbody id="upload-rows">${results === null ? '' : resultRows(results)}</tbody></table></div>
</section>
<script src="${ASSETS.uploadJs.path}" defer></script>`
  return reportLayout({ title: 'Upload reports', viewer, tab: '/reports/upload', body })
}
