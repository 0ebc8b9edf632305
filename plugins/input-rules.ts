import { FailureError } from './failures.ts'

// Input rules that hold for every route, so a new route has them without doing anything
// (docs/api.md, "Input rules"): no control characters in any text, no prototype-named keys, no
// repeated query keys, JSON nested at most MAX_DEPTH levels. Schemas add the per-field rules.
// Checked by plugins/input-guard.ts (query, path, forms) and plugins/body-limit.ts (JSON bodies).

/**
 * Keys that name Object.prototype members (`__proto__`, `constructor`, `toString`, ...). No field
 * is named so, and such a key is how prototype pollution and `obj[key]` confusions start.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * C0 controls and DEL, refused in every text value and key. PostgreSQL refuses NUL in text outright.
 * TAB, LF and CR stay allowed here for multi-line form fields (the dashboard's textareas);
 * single-line schema fields refuse them too (plugins/input-schemas.ts).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/

/** Deeper JSON than any request model needs; walking it costs stack and time for nothing. */
export const MAX_DEPTH = 32

export interface InputProblem {
  field: string
  message: string
}

/** A field name fit to quote back: controls shown as escapes, long names cut. */
function quoted(field: string): string {
  const visible = field.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: shown as escapes, not removed
    /[\u0000-\u001f\u007f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  return visible.length > 100 ? `${visible.slice(0, 100)}…` : visible
}

function keyProblem(key: string, field: string): InputProblem | null {
  if (PROTOTYPE_KEYS.has(key))
    return { field: quoted(field), message: `The ${quoted(field)} field is not accepted.` }
  if (CONTROL.test(key) || !key.isWellFormed())
    return {
      field: quoted(field),
      message: 'Field names must be well-formed text without control characters.',
    }
  return null
}

function textProblem(value: string, field: string): InputProblem | null {
  if (CONTROL.test(value))
    return {
      field: quoted(field),
      message: `The ${quoted(field)} field must not contain control characters.`,
    }
  // A lone surrogate (`"\ud800"` in JSON) is no character at all; stored, it becomes U+FFFD.
  if (!value.isWellFormed())
    return { field: quoted(field), message: `The ${quoted(field)} field must be well-formed Unicode text.` }
  return null
}

/**
 * The first rule broken anywhere in a parsed JSON value, naming its field as validation does
 * (`a.0.b`). Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function findUnsafeJson(root: unknown, part = 'body'): InputProblem | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }]
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!
    const field = path === '' ? part : path
    if (typeof value === 'string') {
      const problem = textProblem(value, field)
      if (problem) return problem
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth >= MAX_DEPTH) {
      return { field: part, message: `The ${part} is nested too deeply (at most ${MAX_DEPTH} levels).` }
    }
    const entries = Array.isArray(value)
      ? value.map((item, index) => [String(index), item] as const)
      : Object.entries(value)
    for (const [key, item] of entries) {
      const child = path === '' ? key : `${path}.${key}`
      if (!Array.isArray(value)) {
        const problem = keyProblem(key, child)
        if (problem) return problem
      }
      stack.push({ value: item, path: child, depth: depth + 1 })
    }
  }
  return null
}

/** Query strings and form bodies: keys and values, each key at most once. */
export function findUnsafePairs(
  pairs: URLSearchParams,
  options: { repeatable: boolean },
): InputProblem | null {
  const seen = new Set<string>()
  for (const [key, value] of pairs) {
    const problem = keyProblem(key, key) ?? textProblem(value, key)
    if (problem) return problem
    if (!options.repeatable && seen.has(key)) {
      return { field: quoted(key), message: `The ${quoted(key)} field must be given once.` }
    }
    seen.add(key)
  }
  return null
}

/** Percent-decoded UTF-8, or null; in a query or form `+` is a space, in a path it is itself. */
const decoded = (text: string, plusIsSpace = true): string | null => {
  try {
    return decodeURIComponent(plusIsSpace ? text.replaceAll('+', ' ') : text)
  } catch {
    return null
  }
}

const notUtf8 = (field: string): InputProblem => ({
  field,
  message: `The ${field} field must be well-formed UTF-8 text.`,
})

/**
 * The first key or value of raw `a=b&c=d` text (a query string, a form body) that is not
 * percent-encoded UTF-8 (`%ff`, an encoded surrogate `%ed%a0%80`). URLSearchParams reads such bytes
 * as U+FFFD, so the text would be stored changed; the JSON API refuses a lone surrogate the same way.
 */
export function findUndecodable(raw: string, part: string): InputProblem | null {
  for (const pair of raw.split('&')) {
    const equals = pair.indexOf('=')
    const key = decoded(equals < 0 ? pair : pair.slice(0, equals))
    if (key === null) return notUtf8(part)
    if (equals >= 0 && decoded(pair.slice(equals + 1)) === null) return notUtf8(quoted(key))
  }
  return null
}

/** Plain decimal notation: how a number in a query or a path is written. */
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/

/**
 * The first query or path value that validation took as a number though its text does not plainly
 * say that number. Elysia coerces with Number(), which reads ` 1`, `1\t`, `0x10`, `0o7` and `0b1`,
 * and rounds `1.0000000000000001` to the whole number 1 (found by a hostile-input sweep).
 */
export function findLooseNumbers(
  raw: Iterable<readonly [string, string | null]>,
  coerced: Record<string, unknown> | null | undefined,
): InputProblem | null {
  if (coerced === null || coerced === undefined) return null
  for (const [key, text] of raw) {
    const value = Object.hasOwn(coerced, key) ? coerced[key] : undefined
    if (typeof value !== 'number' || text === null) continue
    if (!PLAIN_NUMBER.test(text) || (Number.isInteger(value) && /\.\d*[1-9]/.test(text)))
      return {
        field: quoted(key),
        message: `The ${quoted(key)} field must be a number written in decimal digits.`,
      }
  }
  return null
}

/**
 * A path's parameters as written, by the route's `:name` segments: each name with its decoded
 * text, or null where the segment is not percent-encoded UTF-8.
 */
export function rawPathParams(route: string, pathname: string): [string, string | null][] {
  const names = route.split('/')
  const segments = pathname.split('/')
  if (names.length !== segments.length) return []
  return names.flatMap((name, i) =>
    name.startsWith(':')
      ? [[name.slice(1).replace(/\?$/, ''), decoded(segments[i]!, false)] as [string, string | null]]
      : [],
  )
}

/** The first path parameter that is not percent-encoded UTF-8 (rawPathParams). */
export function findUndecodablePath(params: readonly [string, string | null][]): InputProblem | null {
  const bad = params.find(([, text]) => text === null)
  return bad === undefined ? null : notUtf8(quoted(bad[0]))
}

export function unsafeInputFailure(problem: InputProblem): FailureError {
  return new FailureError({
    code: 'validation_failed',
    message: problem.message,
    errors: { [problem.field]: [problem.message] },
  })
}
