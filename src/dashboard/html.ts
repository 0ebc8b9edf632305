// A small HTML layer: `html\`...\`` escapes every interpolated value unless it is already SafeHtml
// (the result of another `html` or of `raw`), so markup is safe by default and no template
// dependency is needed. Arrays are joined; null, undefined and false render nothing.

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!)
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | HtmlValue[]

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new SafeHtml(out)
}

/** Markup the caller vouches for (constants written in this code base, never request data). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup)
}
