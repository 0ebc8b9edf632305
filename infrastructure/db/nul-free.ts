// PostgreSQL's text and jsonb hold no U+0000 (text refuses the byte, jsonb the `\u0000` escape),
// while JSON and mail text may carry one. A report is data from outside: a NUL in one of its
// values is damage in that value, stored as U+FFFD (as the aggregate parser reads a raw NUL,
// domain/reports/aggregate-parser.ts), never a refused statement that fails the message's job on
// every retry.

const NUL = '\u0000'

/** `value` with every NUL in its strings replaced by U+FFFD; the same object when it holds none. */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes(NUL) ? value.replaceAll(NUL, '\uFFFD') : value) as T
  if (Array.isArray(value)) {
    const items = value.map(withoutNul)
    return (items.some((item, i) => item !== value[i]) ? items : value) as T
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false
    const entries = Object.entries(value).map(([key, item]) => {
      const clean = withoutNul(item)
      const cleanKey = withoutNul(key)
      if (clean !== item || cleanKey !== key) changed = true
      return [cleanKey, clean] as const
    })
    return (changed ? Object.fromEntries(entries) : value) as T
  }
  return value
}
