// PostgreSQL's text and jsonb hold no U+0000 (text refuses the byte, jsonb the `\u0000` escape),
// and jsonb refuses a lone surrogate's escape (`\ud800`), while JSON and mail text may carry
// either. A report is data from outside: such a character is damage in one value, stored as
// U+FFFD (as the aggregate parser reads a raw NUL or a bad character reference,
// domain/reports/aggregate/xml-text.ts), never a refused statement that fails the message's job
// on every retry. The other C0 controls (but TAB, LF and CR, which multi-line fields of failure
// reports hold) and DEL are damage too: the API refuses them in text it is given (docs/api.md,
// "Input rules"), and a report's values are shown by the same API and pages.

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it marks
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it marks
const CONTROLS_ALL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

/** `text` with lone surrogates and control characters (but TAB, LF, CR) as U+FFFD. */
export function markedText(text: string): string {
  const formed = text.isWellFormed() ? text : text.toWellFormed()
  return CONTROLS.test(formed) ? formed.replace(CONTROLS_ALL, '\uFFFD') : formed
}

/** `value` with every string in it (keys included) passed through markedText; the same object when nothing changed. */
export function withDamageMarked<T>(value: T): T {
  if (typeof value === 'string') return markedText(value) as T
  if (Array.isArray(value)) {
    const items = value.map(withDamageMarked)
    return (items.some((item, i) => item !== value[i]) ? items : value) as T
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false
    const entries = Object.entries(value).map(([key, item]) => {
      const clean = withDamageMarked(item)
      const cleanKey = markedText(key)
      if (clean !== item || cleanKey !== key) changed = true
      return [cleanKey, clean] as const
    })
    return (changed ? Object.fromEntries(entries) : value) as T
  }
  return value
}
