// Turns schema validation errors into the contract's `{message, errors: {field: [...]}}` (contract §2).
// TypeBox's own messages ("Expected union value") and Elysia's default body must not leak through,
// so each message is written from the failing field's schema instead.

interface SchemaLike {
  type?: string
  anyOf?: SchemaLike[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
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
 * `/domain_name` → `domain_name`; `/a/0/b` → `a.0.b`. Elysia reports a coerced query or path value
 * that fails its range (`?per_page=500`) at the root path, so the field is found by its value in the
 * input; failing that, the part of the request (`body`, `query`) is named.
 */
export function fieldName(
  error: Pick<ValueErrorLike, 'path' | 'value'>,
  part: string,
  input?: unknown,
): string {
  const trimmed = error.path.replace(/^\//, '')
  if (trimmed !== '') return trimmed.split('/').join('.')
  if (input !== null && typeof input === 'object' && error.value !== input) {
    for (const [key, value] of Object.entries(input)) {
      if (String(value) === String(error.value)) return key
    }
  }
  return part
}

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

export function describeError(error: ValueErrorLike, field: string): string {
  const { schema, value } = error
  if (value === undefined) return `The ${field} field is required.`
  const allowed = allowedValues(schema)
  if (allowed !== null) return `The ${field} field must be one of: ${allowed.map(String).join(', ')}.`
  if (isIntegerLike(schema)) return `The ${field} field must be a whole number${range(schema)}.`
  switch (schema.type) {
    case 'number':
      return `The ${field} field must be a number${range(schema)}.`
    case 'boolean':
      return `The ${field} field must be true or false.`
    case 'object':
      return `The ${field} field must be a JSON object.`
    case 'array':
      return `The ${field} field must be a list.`
    case 'null':
      return `The ${field} field must be null.`
    case 'string': {
      if (typeof value !== 'string') return `The ${field} field must be a string.`
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        return schema.minLength === 1
          ? `The ${field} field must not be empty.`
          : `The ${field} field must have at least ${schema.minLength} characters.`
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        return `The ${field} field may have at most ${schema.maxLength} characters.`
      }
      if (schema.format === 'date-time' || schema.format === 'date') {
        return `The ${field} field must be an ISO 8601 ${schema.format === 'date' ? 'date' : 'timestamp'}.`
      }
      return `The ${field} field has an invalid format.`
    }
  }
  // A nullable or mixed union: describe the non-null alternative.
  const alternative = (schema.anyOf ?? []).find((s) => s.type !== 'null')
  if (alternative) return describeError({ ...error, schema: alternative }, field)
  return `The ${field} field is invalid.`
}

export function validationBody(
  errors: ValueErrorLike[],
  part: string,
  input?: unknown,
): { message: string; errors: Record<string, string[]> } {
  const byField: Record<string, string[]> = {}
  for (const error of errors) {
    const field = fieldName(error, part, input)
    const message = describeError(error, field)
    const list = byField[field] ?? []
    if (!list.includes(message)) list.push(message)
    byField[field] = list
  }
  if (Object.keys(byField).length === 0) byField[part] = [`The ${part} is invalid.`]
  const first = Object.values(byField)[0]![0]!
  const more = Object.keys(byField).length - 1
  return {
    message: more > 0 ? `${first} (and ${more} more error${more > 1 ? 's' : ''})` : first,
    errors: byField,
  }
}
