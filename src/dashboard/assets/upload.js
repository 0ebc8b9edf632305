// dmarcwatch dashboard, Upload reports (report-upload-views.ts): each chosen file goes up on its own
// request, with a progress bar, and its result shows as soon as the server has processed it.
// Progressive enhancement: without this script the form posts every file at once and the answer
// lists each. Loaded only by that page, after app.js.
;(() => {
  const UPLOAD_BADGES = {
    stored: 'ok',
    duplicate: 'unknown',
    quarantined: 'warning',
    pending: 'unknown',
    skipped: 'missing',
    refused: 'missing',
    failed: 'missing',
  }
  const uploadForm = document.querySelector('form[data-upload]')
  if (uploadForm && window.FormData && window.XMLHttpRequest) {
    uploadForm.addEventListener('submit', (event) => {
      const input = uploadForm.querySelector('input[type="file"]')
      if (!input || input.files.length === 0) return
      event.preventDefault()
      uploadFiles(uploadForm, input)
    })
  }

  function cell(tag, text) {
    const element = document.createElement(tag)
    if (text !== undefined) element.textContent = text
    return element
  }

  function badge(status) {
    const span = cell('span', status)
    span.className = `badge ${UPLOAD_BADGES[status] || 'unknown'}`
    return span
  }

  function itemRow(item) {
    const row = cell('tr')
    const name = cell('th', item.label)
    name.scope = 'row'
    const result = cell('td')
    result.appendChild(badge(item.status))
    const detail = cell('td', item.detail)
    if (item.status === 'quarantined') {
      const link = cell('a', 'Quarantine')
      link.href = '/reports/quarantine'
      detail.append(' ', link)
    }
    row.append(name, result, detail)
    return row
  }

  function uploadFailure(xhr, body) {
    if (xhr.status === 413) return 'larger than the upload limit'
    if (xhr.status === 403) return 'refused: reload the page and try again'
    if (xhr.responseURL && new URL(xhr.responseURL).pathname === '/login')
      return 'your session has ended: reload the page and log in'
    if (body && typeof body.message === 'string') return body.message
    return xhr.status === 0 ? 'the upload did not reach the server' : `the server answered ${xhr.status}`
  }

  function uploadOne(form, file, onProgress) {
    return new Promise((resolve) => {
      const data = new FormData()
      data.append('_csrf', form.querySelector('input[name="_csrf"]').value)
      data.append('files', file, file.name)
      const xhr = new XMLHttpRequest()
      xhr.open('POST', form.action)
      xhr.setRequestHeader('Accept', 'application/json')
      xhr.upload.addEventListener('progress', (e) => {
        if (e.lengthComputable) onProgress(e.loaded / e.total)
      })
      const failed = (detail) => resolve([{ label: file.name, status: 'failed', detail }])
      xhr.addEventListener('load', () => {
        let body = null
        try {
          body = JSON.parse(xhr.responseText)
        } catch {}
        if (xhr.status === 200 && body && body.data && Array.isArray(body.data.items))
          resolve(body.data.items)
        else failed(uploadFailure(xhr, body))
      })
      xhr.addEventListener('error', () => failed(uploadFailure(xhr, null)))
      xhr.send(data)
    })
  }

  async function uploadFiles(form, input) {
    const files = [...input.files]
    const section = document.getElementById('upload-results')
    const rows = document.getElementById('upload-rows')
    const summary = document.getElementById('upload-summary')
    const button = form.querySelector('button[type="submit"]')
    section.hidden = false
    rows.textContent = ''
    button.disabled = true
    input.disabled = true
    // A row per file at once, so the whole batch is visible while the first goes up.
    const pending = files.map((file) => {
      const row = cell('tr')
      const name = cell('th', file.name)
      name.scope = 'row'
      const result = cell('td')
      const bar = cell('progress')
      bar.max = 1
      bar.value = 0
      bar.setAttribute('aria-label', `Upload of ${file.name}`)
      const state = badge('waiting')
      result.append(bar, ' ', state)
      row.append(name, result, cell('td'))
      rows.appendChild(row)
      return { row, bar, state }
    })
    const items = []
    const counts = {}
    const tally = () =>
      Object.keys(UPLOAD_BADGES)
        .filter((s) => counts[s] || ['stored', 'duplicate', 'quarantined'].includes(s))
        .map((s) => `${counts[s] || 0} ${s}`)
        .join(', ')
    for (let i = 0; i < files.length; i++) {
      const { row, bar, state } = pending[i]
      state.textContent = 'uploading'
      summary.textContent = `Uploading ${i + 1} of ${files.length}: ${tally()}`
      const done = await uploadOne(form, files[i], (ratio) => {
        bar.value = ratio
        if (ratio >= 1) state.textContent = 'processing'
      })
      for (const item of done) {
        items.push(item)
        counts[item.status] = (counts[item.status] || 0) + 1
      }
      row.replaceWith(...done.map(itemRow))
    }
    summary.textContent = `${files.length} ${files.length === 1 ? 'file' : 'files'}, ${items.length} ${items.length === 1 ? 'item' : 'items'}: ${tally()}`
    // app.js's one-submission guard disabled the button when the form was submitted: undone here.
    button.disabled = false
    delete button.dataset.submitting
    input.disabled = false
    input.value = ''
  }
})()
