// dmarcwatch dashboard: progressive enhancement only. Every page works without this file.
;(() => {
  document.documentElement.classList.replace('no-js', 'js')

  // Copy buttons: <button data-copy="element-id">; the text of that element goes to the clipboard.
  for (const button of document.querySelectorAll('[data-copy]')) {
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.getAttribute('data-copy'))
      if (!source) return
      const label = button.textContent
      try {
        await navigator.clipboard.writeText(source.textContent.trim())
        button.textContent = 'Copied'
      } catch {
        // No clipboard permission (plain http off localhost): select the text for Ctrl+C instead.
        const range = document.createRange()
        range.selectNodeContents(source)
        const selection = window.getSelection()
        selection.removeAllRanges()
        selection.addRange(range)
        button.textContent = 'Press Ctrl+C'
      }
      setTimeout(() => {
        button.textContent = label
      }, 2000)
    })
  }

  // Forms asking for confirmation (revoking a token, logging out other sessions).
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault()
    })
  }

  // One submission per click: a slow answer (password hashing, DNS checks) must not be sent twice.
  for (const form of document.querySelectorAll('form')) {
    form.addEventListener('submit', (event) => {
      if (event.defaultPrevented) return
      for (const button of form.querySelectorAll('button[type="submit"], button:not([type])')) {
        setTimeout(() => {
          button.disabled = true
          button.dataset.submitting = ''
        }, 0)
      }
    })
  }
  // Back to a page from the history cache: its buttons were disabled by the submission above.
  window.addEventListener('pageshow', () => {
    for (const button of document.querySelectorAll('button[data-submitting]')) {
      button.disabled = false
      delete button.dataset.submitting
    }
  })
})()
