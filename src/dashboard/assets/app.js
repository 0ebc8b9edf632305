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

  // Period filters (report-frame-views.ts filterForm): choosing "last N days" clears the dates, and
  // entering a date selects the custom range. Without this file, dates win when both are sent.
  for (const select of document.querySelectorAll('select[data-period]')) {
    const dates = [...select.form.querySelectorAll('input[name="from"], input[name="to"]')]
    select.addEventListener('change', () => {
      if (select.value !== 'custom') for (const input of dates) input.value = ''
    })
    for (const input of dates) {
      input.addEventListener('change', () => {
        if (!dates.some((date) => date.value !== '')) return
        if (!select.querySelector('option[value="custom"]'))
          select.prepend(new Option('custom range', 'custom'))
        select.value = 'custom'
      })
    }
  }

  // Charts (chart-views.ts): <figure data-chart="id"> holds the server's SVG; #id-data the series
  // as JSON. uPlot comes in a deferred script after this one, so it is there by DOMContentLoaded.
  // Without uPlot (or on any error) the SVG simply stays.
  document.addEventListener('DOMContentLoaded', () => {
    if (typeof window.uPlot !== 'function') return
    for (const figure of document.querySelectorAll('figure[data-chart]')) {
      try {
        drawChart(figure)
      } catch (error) {
        console.warn('chart left as SVG:', error)
      }
    }
  })

  const DAY = 86400
  const number = (n) => n.toLocaleString('en-US')
  const percent = (n) => (n === null || n === undefined ? '–' : `${n.toFixed(1)}%`)

  function cssColor(name, fallback) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback
  }

  /** `#rrggbb` with an alpha; other colour syntaxes are returned as they are. */
  function alpha(color, a) {
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color)
    if (!m) return color
    return `rgba(${parseInt(m[1], 16)}, ${parseInt(m[2], 16)}, ${parseInt(m[3], 16)}, ${a})`
  }

  function drawChart(figure) {
    const id = figure.getAttribute('data-chart')
    const source = document.getElementById(`${id}-data`)
    const live = document.getElementById(`${id}-live`)
    if (!source || !live) return
    const data = JSON.parse(source.textContent)
    const uPlot = window.uPlot
    const xs = data.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000)
    const accent = cssColor('--accent', '#1f5fbf')
    const ok = cssColor('--ok', '#1a7f37')
    const muted = cssColor('--muted', '#5b616b')
    const line = cssColor('--line', '#d9dbe0')
    const utc = (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC')
    const period = `${data.days[0]} – ${data.days[data.days.length - 1]}`
    // Not hovering, the legend shows the period's totals; hovering, the day under the cursor.
    const series = [
      { label: 'Day', value: (_u, _v, _s, idx) => (idx === null ? period : data.days[idx]) },
      {
        label: data.countLabel,
        scale: 'count',
        stroke: accent,
        fill: alpha(accent, 0.45),
        width: 1,
        points: { show: false },
        paths: uPlot.paths.bars({ size: [0.7, 48], align: 0 }),
        value: (_u, v, _s, idx) => (idx === null ? `${number(data.total)} in total` : number(v ?? 0)),
      },
      {
        label: data.rateLabel,
        scale: 'rate',
        stroke: ok,
        width: 2.5,
        spanGaps: false,
        points: { size: 6, fill: ok },
        value: (_u, v, _s, idx) => (idx === null ? `${percent(data.rate)} overall` : percent(v)),
      },
    ]
    const size = () => {
      const width = Math.max(280, Math.min(figure.clientWidth, 896))
      return { width, height: Math.round(width / 3) }
    }
    const tip = document.createElement('div')
    tip.className = 'chart-tip'
    tip.hidden = true
    const opts = {
      ...size(),
      tzDate: utc,
      series,
      scales: {
        x: { time: true, range: (_u, min, max) => [min - DAY / 2, max + DAY / 2] },
        count: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.05] },
        rate: { range: [0, 100] },
      },
      axes: [
        { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } },
        {
          scale: 'count',
          stroke: muted,
          grid: { stroke: line, width: 1 },
          ticks: { stroke: line, width: 1 },
          values: (_u, values) => values.map((v) => (Number.isInteger(v) ? number(v) : '')),
        },
        {
          scale: 'rate',
          side: 1,
          stroke: ok,
          grid: { show: false },
          ticks: { stroke: line, width: 1 },
          values: (_u, values) => values.map((v) => `${v}%`),
        },
      ],
      cursor: { drag: { x: false, y: false }, points: { size: 8 } },
      legend: { live: true },
      hooks: {
        init: [(u) => u.over.appendChild(tip)],
        setCursor: [
          (u) => {
            const idx = u.cursor.idx
            if (idx === null || idx === undefined) {
              tip.hidden = true
              return
            }
            tip.textContent = `${data.days[idx]}: ${number(data.counts[idx])} ${data.noun}, ${percent(data.rates[idx])}`
            tip.hidden = false
            const left = u.valToPos(xs[idx], 'x')
            tip.style.left = `${Math.min(left + 12, u.over.clientWidth - tip.offsetWidth)}px`
            tip.style.top = `${Math.max(0, u.cursor.top - tip.offsetHeight - 8)}px`
          },
        ],
      },
    }
    live.hidden = false
    // A day without any: no bar at all (a zero-height bar would still draw its outline).
    const counts = data.counts.map((n) => (n === 0 ? null : n))
    const chart = new uPlot(opts, [xs, counts, data.rates], live)
    figure.classList.add('enhanced')
    if ('ResizeObserver' in window) {
      let last = figure.clientWidth
      new ResizeObserver(() => {
        if (figure.clientWidth === last) return
        last = figure.clientWidth
        chart.setSize(size())
      }).observe(figure)
    }
  }
})()
