// Numbers as recommendation titles show them. Written by hand rather than with Intl or
// toLocaleString: the output must not depend on the host's locale or ICU data, so that the same
// reports give byte-identical titles everywhere (and recommendation ids can be compared over time).

/** `1234567` → `1,234,567`; non-integers are rounded to the nearest integer first. */
export function formatCount(value: number): string {
  const rounded = Math.round(value)
  const digits = String(Math.abs(rounded))
  let out = ''
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ','
    out += digits[i]
  }
  return rounded < 0 ? `-${out}` : out
}

/**
 * `part / whole` as a percentage with one decimal, truncated rather than rounded: a figure shown
 * as `98.0%` really is at least 98%, so a title never shows a rate on the passing side of a
 * threshold it missed. A non-zero part too small to show is `<0.1%`, not a misleading `0.0%`.
 */
export function formatPercent(part: number, whole: number): string {
  if (!(whole > 0) || !(part > 0)) return '0.0%'
  // Integer counts: part * 1000 / whole is exact when it is a whole number, so the floor is safe.
  const tenths = Math.floor((part * 1000) / whole)
  if (tenths === 0) return '<0.1%'
  return `${formatCount(Math.floor(tenths / 10))}.${tenths % 10}%`
}

/** `part / whole`, 0 for an empty whole (no volume means no share, not NaN). */
export const ratio = (part: number, whole: number): number => (whole > 0 ? part / whole : 0)
