import { BIDI_CONTROLS, BIDI_CONTROLS_TEXT, CONTROL_CHARACTERS } from '../domain/shared/control-characters.ts'

// Turns schema validation errors into the `{message, errors: {field: [...]}}` (docs/api.md "Errors").
// TypeBox's own messages ("Expected union value") and Elysia's default body must not leak through,
// so each message is written from the failing field's schema instead, naming the rule the value
// breaks: every keyword a request schema uses has its message (tests/plugins/validation-messages.test.ts).

interface SchemaLike {
  type?: string
  anyOf?: SchemaLike[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  format?: string
  pattern?: string
  description?: string
  enum?: unknown[]
}

interface ValueErrorLike {
  path: string
  schema: SchemaLike
  value: unknown
}

/**
 * `/domain_name` → `domain_name`; `/a/0/b` → `a.0.b`. Elysia reports a coerced query, path or body
 * value that fails its range (`?per_page=500`) at the root path with only the coerced number, so the
 * field is found by its value in the inputs, in order; failing that, the part of the request
 * (`body`, `query`) is named.
 */
export function fieldName(
  error: Pick<ValueErrorLike, 'path' | 'value'>,
  part: string,
  input?: unknown,
  ...more: unknown[]
): string {
  const trimmed = error.path.replace(/^\//, '')
  if (trimmed !== '') return trimmed.split('/').join('.')
  for (const candidate of [input, ...more]) {
    if (candidate === null || typeof candidate !== 'object' || error.value === candidate) continue
    const found = locate(candidate, error.value)
    if (found !== null) return found
  }
  return part
}

/** The dotted path of the first value in `input` that is `value` or text that coerces to it. */
function locate(input: object, value: unknown, depth = 0): string | null {
  if (depth > 4) return null
  for (const [key, item] of Object.entries(input)) {
    if (sameValue(item, value)) return key
    if (item !== null && typeof item === 'object') {
      const inner = locate(item, value, depth + 1)
      if (inner !== null) return `${key}.${inner}`
    }
  }
  return null
}

/** Equal, or text that Elysia's coercion turns into this number (`"1e+308"`, `"99999999999999999999"`). */
function sameValue(item: unknown, value: unknown): boolean {
  if (Object.is(item, value)) return true
  if (typeof value === 'number' && typeof item === 'string' && item.trim() !== '')
    return Object.is(+item, value)
  return false
}

/** How a string format is named in a message; a format not listed "has an invalid format". */
const FORMAT_NAMES: Record<string, string> = {
  date: 'an ISO 8601 date',
  'date-time': 'an ISO 8601 timestamp',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  ip: 'an IP address',
  uuid: 'a UUID',
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

function allowedValues(schema: SchemaLike): unknown[] | null {
  if (Array.isArray(schema.enum)) return schema.enum
  if (!schema.anyOf || schema.anyOf.length === 0) return null
  if (!schema.anyOf.every((s) => 'const' in s)) return null
  return schema.anyOf.map((s) => s.const)
}

function isIntegerLike(schema: SchemaLike): boolean {
  return schema.type === 'integer' || (schema.anyOf ?? []).some((s) => s.type === 'integer')
}

function range(schema: SchemaLike): string {
  const { minimum, maximum } = schema
  const inner = (schema.anyOf ?? []).find((s) => s.minimum !== undefined || s.maximum !== undefined)
  const min = minimum ?? inner?.minimum
  const max = maximum ?? inner?.maximum
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`
  if (min !== undefined) return ` of at least ${min}`
  if (max !== undefined) return ` of at most ${max}`
  return ''
}

/** A list's count or repeated items; "must be a list" only when the value is none. */
function describeList(schema: SchemaLike, value: unknown, field: string): string {
  if (!Array.isArray(value)) return `The ${field} field must be a list.`
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    return `The ${field} field may have at most ${plural(schema.maxItems, 'item')}.`
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    return schema.minItems === 1
      ? `The ${field} field must not be empty.`
      : `The ${field} field must have at least ${plural(schema.minItems, 'item')}.`
  }
  if (schema.uniqueItems && new Set(value.map((item) => JSON.stringify(item))).size < value.length)
    return `The ${field} field must not list the same item twice.`
  // The list itself is fine: an item failed, and TypeBox reports it at its own path too.
  return `The ${field} field has an invalid item.`
}

/** A string's length, characters or format, in the order TypeBox checks them. */
function describeText(schema: SchemaLike, value: unknown, field: string): string {
  if (typeof value !== 'string') return `The ${field} field must be a string.`
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    return schema.minLength === 1
      ? `The ${field} field must not be empty.`
      : `The ${field} field must have at least ${schema.minLength} characters.`
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    return `The ${field} field may have at most ${schema.maxLength} characters.`
  }
  if (schema.pattern !== undefined && CONTROL_CHARACTERS.test(value))
    return `The ${field} field must not contain control characters.`
  if (schema.pattern !== undefined && BIDI_CONTROLS.test(value))
    return `The ${field} field must not contain ${BIDI_CONTROLS_TEXT}.`
  const format = schema.format === undefined ? undefined : FORMAT_NAMES[schema.format]
  if (format !== undefined) return `The ${field} field must be ${format}.`
  return `The ${field} field has an invalid format.`
}

export function describeError(error: ValueErrorLike, field: string): string {
  const { schema, value } = error
  if (value === undefined) return `The ${field} field is required.`
  const allowed = allowedValues(schema)
  if (allowed !== null) return `The ${field} field must be one of: ${allowed.map(String).join(', ')}.`
  if ('const' in schema) return `The ${field} field must be ${String(schema.const)}.`
  if (isIntegerLike(schema)) return `The ${field} field must be a whole number${range(schema)}.`
  switch (schema.type) {
    case 'number':
      return `The ${field} field must be a number${range(schema)}.`
    case 'boolean':
      return `The ${field} field must be true or false.`
    case 'object':
      return `The ${field} field must be a JSON object.`
    case 'array':
      return describeList(schema, value, field)
    case 'null':
      return `The ${field} field must be null.`
    case 'string':
      return describeText(schema, value, field)
  }
  // A nullable or mixed union: describe the alternative the value is meant for (a list for a list).
  const alternatives = (schema.anyOf ?? []).filter((s) => s.type !== 'null')
  const alternative = alternatives.find((s) => s.type === 'array' && Array.isArray(value)) ?? alternatives[0]
  if (alternative) return describeError({ ...error, schema: alternative }, field)
  return `The ${field} field is invalid.`
}

export function validationBody(
  errors: ValueErrorLike[],
  part: string,
  input?: unknown,
  ...more: unknown[]
): { message: string; errors: Record<string, string[]> } {
  // A Map, not an object literal: a field may be named `__proto__`, `constructor` or `toString`.
  const byField = new Map<string, string[]>()
  for (const error of errors) {
    const field = fieldName(error, part, input, ...more)
    const message = describeError(error, field)
    const list = byField.get(field) ?? []
    if (!list.includes(message)) list.push(message)
    byField.set(field, list)
  }
  return validationFailure(byField, part)
}

/** The contract's validation body from messages by field; `part` names the request part if none. */
function validationFailure(
  byField: Map<string, string[]>,
  part: string,
): { message: string; errors: Record<string, string[]> } {
  if (byField.size === 0) byField.set(part, [`The ${part} is invalid.`])
  const [first] = [...byField.values()][0]!
  const more = byField.size - 1
  // Object.fromEntries defines own properties, so a `__proto__` field stays a field in the JSON.
  return {
    message: more > 0 ? `${first} (and ${more} more error${more > 1 ? 's' : ''})` : first!,
    errors: Object.fromEntries(byField),
  }
}
