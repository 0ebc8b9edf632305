// dmarcwatch scanner widget: a dependency-free script a site drops in to render a domain scanner.
//
//   <div data-dmarcwatch-scanner></div>
//   <script src="https://dmarcwatch.example/embed/widget.js" data-key="ek_..." async></script>
//
// It renders into a shadow root (host styles cannot break it, it cannot break the host), inherits
// the host's font and colour, and can be themed with CSS custom properties on the container:
// --dw-accent, --dw-radius, --dw-border, --dw-background.
;(() => {
  const script = document.currentScript
  if (!script) return
  const key = script.getAttribute('data-key')
  const base = new URL(script.src).origin
  const targets = document.querySelectorAll('[data-dmarcwatch-scanner]')
  const SEVERITY_TONE = { critical: 'error', high: 'error', medium: 'warning', low: 'warning', info: 'ok' }
  const STATUS_LABEL = {
    ok: 'OK',
    warning: 'Warning',
    error: 'Problem',
    missing: 'Missing',
    unknown: 'Unknown',
  }
  const CSS = `
    :host { display: block; font: inherit; color: inherit; }
    .box { border: 1px solid var(--dw-border, #d0d7de); border-radius: var(--dw-radius, 8px);
           background: var(--dw-background, transparent); padding: 1rem; max-width: 40rem; }
    form { display: flex; gap: .5rem; flex-wrap: wrap; }
    input { flex: 1 1 12rem; font: inherit; padding: .45rem .6rem; border: 1px solid var(--dw-border, #d0d7de);
            border-radius: calc(var(--dw-radius, 8px) / 2); }
    button { font: inherit; padding: .45rem .9rem; border: 0; border-radius: calc(var(--dw-radius, 8px) / 2);
             background: var(--dw-accent, #0b5cad); color: #fff; cursor: pointer; }
    button[disabled] { opacity: .6; cursor: progress; }
    .result { margin-top: 1rem; }
    .head { display: flex; align-items: center; gap: .75rem; }
    .grade { width: 2.6rem; height: 2.6rem; border-radius: 50%; display: grid; place-items: center;
             font-weight: 700; font-size: 1.3rem; color: #fff; background: #6e7781; }
    .grade.A { background: #1a7f37; } .grade.B { background: #4d9a2a; } .grade.C { background: #bf8700; }
    .grade.D { background: #d1570f; } .grade.F { background: #cf222e; }
    ul { list-style: none; padding: 0; margin: .75rem 0 0; }
    li { padding: .35rem 0; border-top: 1px solid var(--dw-border, #eaeef2); }
    .badge { display: inline-block; min-width: 4.5rem; font-size: .8em; font-weight: 600; }
    .ok { color: #1a7f37; } .warning { color: #9a6700; } .error, .missing { color: #cf222e; }
    code { font-size: .85em; word-break: break-all; }
    .error-text { color: #cf222e; margin-top: .75rem; }
  `

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag)
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value)
    for (const child of children) node.append(child)
    return node
  }

  function render(root, data) {
    const result = root.querySelector('.result')
    result.replaceChildren()
    const head = el(
      'div',
      { class: 'head' },
      el('div', { class: `grade ${data.grade}`, 'aria-label': `Grade ${data.grade}` }, data.grade),
    )
    head.append(el('strong', {}, data.domain))
    result.append(head)
    const areas = el('ul', { 'aria-label': 'Findings by area' })
    for (const [area, report] of Object.entries(data.areas)) {
      const item = el(
        'li',
        {},
        el('span', { class: `badge ${report.status}` }, STATUS_LABEL[report.status] || report.status),
      )
      item.append(` ${area.toUpperCase()}: ${report.summary}`)
      areas.append(item)
    }
    result.append(areas)
    if (data.issues.length > 0) {
      const issues = el('ul', { 'aria-label': 'What to fix' })
      for (const issue of data.issues.slice(0, 8)) {
        const item = el(
          'li',
          {},
          el('span', { class: `badge ${SEVERITY_TONE[issue.severity] || 'warning'}` }, issue.severity),
        )
        item.append(` ${issue.message}`)
        if (issue.fix)
          item.append(el('br'), el('code', {}, `${issue.fix.name} ${issue.fix.type} "${issue.fix.value}"`))
        issues.append(item)
      }
      result.append(issues)
    }
  }

  function mount(target) {
    const root = target.attachShadow({ mode: 'open' })
    const input = el('input', {
      type: 'text',
      name: 'domain',
      placeholder: 'example.com',
      'aria-label': 'Domain',
      required: '',
    })
    const button = el('button', { type: 'submit' }, 'Check')
    const form = el('form', {}, input, button)
    root.append(
      el('style', {}, CSS),
      el('div', { class: 'box' }, form, el('div', { class: 'result', 'aria-live': 'polite' })),
    )
    form.addEventListener('submit', async (event) => {
      event.preventDefault()
      const domain = input.value.trim()
      if (!domain) return
      button.disabled = true
      const result = root.querySelector('.result')
      result.replaceChildren(el('div', {}, 'Checking…'))
      try {
        const url = `${base}/api/embed/${encodeURIComponent(key)}/scan?domain=${encodeURIComponent(domain)}`
        const response = await fetch(url, { headers: { accept: 'application/json' } })
        const body = await response.json().catch(() => ({}))
        if (!response.ok) {
          const message =
            body.message || (body.errors && Object.values(body.errors)[0]) || body.error || 'The scan failed.'
          result.replaceChildren(el('div', { class: 'error-text' }, String(message)))
        } else render(root, body.data)
      } catch {
        result.replaceChildren(el('div', { class: 'error-text' }, 'The scanner could not be reached.'))
      } finally {
        button.disabled = false
      }
    })
  }

  for (const target of targets) if (!target.shadowRoot) mount(target)
})()
