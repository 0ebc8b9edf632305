// Bad and hostile values for a request field, generated from its JSON schema as the OpenAPI document
// states it (tests/api/input-sweep.test.ts). A case that breaks the schema or a documented input
// rule (docs/api.md, "Input rules") is a `violation`: it must be a 400 naming the field. A `probe`
// is hostile but allowed by the schema: any answer will do except a 5xx, a leak or HTML.

import { SINGLE_LINE } from '../../plugins/input-schemas.ts'

export interface JsonSchema {
  type?: string | string[]
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  format?: string
  pattern?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  items?: JsonSchema
  properties?: Record<string, JsonSchema>
  required?: string[]
  patternProperties?: Record<string, JsonSchema>
  $ref?: string
  nullable?: boolean
}

export interface ValueCase {
  label: string
  /** For query and path values: the text sent. For JSON bodies: the value, or raw JSON text. */
  value: unknown
  raw?: boolean
  violation: boolean
}

/** The schema's alternatives, flattened (`t.Nullable`, Elysia's numeric-string coercion). */
export function alternatives(schema: JsonSchema): JsonSchema[] {
  const nested = schema.anyOf ?? schema.oneOf
  // OpenAPI 3.0's `nullable: true` and 3.1's `type: [..., 'null']` or `anyOf` alike.
  const withNull = (list: JsonSchema[]) => (schema.nullable ? [...list, { type: 'null' }] : list)
  if (nested) return withNull(nested.flatMap(alternatives))
  if (Array.isArray(schema.type)) return withNull(schema.type.map((type) => ({ ...schema, type })))
  return withNull([schema])
}

const BIG = ['99999999999999999999', '9223372036854775808', '18446744073709551616', '-9223372036854775809']
const CONTROLS = { NUL: 'a\u0000b', ESC: 'a\u001bb', DEL: 'a\u007fb' }
/** Refused by single-line fields: line breaks, and bidi controls that reorder how text displays. */
const SINGLE_LINE_BREAKERS = { LF: 'a\nb', TAB: 'a\tb', RLO: 'a\u202eb', RLI: 'a\u2067b' }
/** Text Number() reads as 1 that is not decimal digits (Elysia's t.Integer took it in a JSON body). */
const LOOSE_INTEGERS = ['0x1', ' 1 ', '1.0', '1e0', '+1']
// Schema-valid text that has broken parsers and queries: numbers past 2^63 and past the year 9999,
// NaN, a prototype name, SQL. Few on purpose: each reaches a handler and the database.
const PROBES = ['9223372036854775808', 'NaN', '99999', '+275760-09-13T00:00:00Z', '__proto__', "' or 1=1 --"]

function kinds(schema: JsonSchema) {
  const alts = alternatives(schema)
  // Elysia lists `{type: string, format: integer}` beside an integer it coerces from text.
  const integer = alts.find((s) => s.type === 'integer' || s.type === 'number')
  const text = alts.filter((s) => s.type === 'string' && s.format !== 'integer' && s.format !== 'number')
  return {
    alts,
    integer,
    text,
    nullable: alts.some((s) => s.type === 'null'),
    boolean: alts.some((s) => s.type === 'boolean'),
    array: alts.find((s) => s.type === 'array'),
    object: alts.find((s) => s.type === 'object'),
  }
}

/** Whether a string value is accepted by one of the schema's string alternatives (length, enum). */
function acceptedText(text: JsonSchema[], value: string): boolean {
  return text.some((s) => {
    if (s.enum && !s.enum.includes(value)) return false
    if (s.const !== undefined && s.const !== value) return false
    if (s.format) return false // no probe is a date, an address or a UUID
    if (s.pattern && !new RegExp(s.pattern, 'u').test(value)) return false
    if (s.maxLength !== undefined && value.length > s.maxLength) return false
    if (s.minLength !== undefined && value.length < s.minLength) return false
    return true
  })
}

/** Values for a query or path parameter (text on the wire). */
export function textCases(schema: JsonSchema): ValueCase[] {
  const k = kinds(schema)
  const cases: ValueCase[] = []
  const add = (label: string, value: string, violation: boolean) => cases.push({ label, value, violation })
  for (const [label, value] of Object.entries(CONTROLS)) add(label, value, true)
  if (k.integer) {
    for (const value of [...BIG, '1e+308', '1.5', 'NaN', 'Infinity', 'abc', '-1'])
      add(`integer ${value}`, value, true)
    if (k.integer.maximum !== undefined) add('maximum + 1', String(k.integer.maximum + 1), true)
    return cases
  }
  if (k.boolean) add('not a boolean', 'maybe', true)
  if (k.text.length > 0) {
    const longest = Math.max(...k.text.map((s) => s.maxLength ?? 0))
    const long = 'x'.repeat(longest >= 10_240 ? longest + 1 : 10_240)
    add(`${long.length} characters`, long, !acceptedText(k.text, long))
    if (k.text.some((s) => s.pattern === SINGLE_LINE))
      for (const [label, value] of Object.entries(SINGLE_LINE_BREAKERS)) add(label, value, true)
    if (k.text.every((s) => s.enum || s.const !== undefined)) add('not one of the values', 'nope', true)
    for (const value of PROBES) add(`probe ${value}`, value, !acceptedText(k.text, value))
  }
  return cases
}

/** Values for a JSON body field. */
export function jsonCases(schema: JsonSchema): ValueCase[] {
  const k = kinds(schema)
  const cases: ValueCase[] = []
  const add = (label: string, value: unknown, violation: boolean, raw = false) =>
    cases.push({ label, value, violation, raw })
  const takesText = k.text.length > 0
  if (takesText) {
    for (const [label, value] of Object.entries(CONTROLS)) add(label, value, true)
    // Only JSON can carry it (as `\ud800`): URLs are UTF-8 bytes.
    add('lone surrogate', 'a\ud800b', true)
    const longest = Math.max(...k.text.map((s) => s.maxLength ?? 0))
    const long = 'x'.repeat(longest >= 10_240 ? longest + 1 : 10_240)
    add(`${long.length} characters`, long, !acceptedText(k.text, long))
    if (k.text.some((s) => s.pattern === SINGLE_LINE))
      for (const [label, value] of Object.entries(SINGLE_LINE_BREAKERS)) add(label, value, true)
    if (k.text.every((s) => s.enum || s.const !== undefined)) add('not one of the values', 'nope', true)
    for (const value of PROBES) add(`probe ${value}`, value, !acceptedText(k.text, value))
    if (!k.integer) add('number for text', 12345, true)
  }
  if (k.integer) {
    const max = k.integer.maximum
    for (const value of [1e308, -1, 1.5, 2 ** 64]) add(`number ${value}`, value, true)
    add('literal 2^63', '9223372036854775808', true, true)
    for (const value of [BIG[1]!, BIG[3]!]) add(`text ${value}`, value, true)
    if (max !== undefined) add('maximum + 1', max + 1, true)
    add('text NaN', 'NaN', true)
    if (!takesText) for (const value of LOOSE_INTEGERS) add(`text ${JSON.stringify(value)}`, value, true)
  }
  if (!k.boolean) add('boolean', true, true)
  else add('text for boolean', 'yes', !takesText)
  if (!k.array) add('array for a scalar', ['x'], true)
  if (!k.object) add('object', { a: 1 }, true)
  if (!k.nullable) add('null', null, true)
  if (k.object) add('text for an object', 'x', !takesText)
  if (k.array) add('object for a list', { 0: 'x' }, true)
  if (k.array?.maxItems !== undefined)
    add(
      'maxItems + 1',
      Array.from({ length: k.array.maxItems + 1 }, (_, i) => `item${i}`),
      true,
    )
  if (k.array?.minItems) add('fewer than minItems', [], true)
  return cases
}

/** A value the schema accepts, for the fields that are not under test. */
export function plausible(schema: JsonSchema, name: string, known: Record<string, unknown>): unknown {
  if (name in known) return known[name]
  const alts = alternatives(schema).filter((s) => s.type !== 'null')
  const s = alts.find((a) => a.type !== 'string' || a.format !== 'integer') ?? alts[0] ?? {}
  if (s.enum) return s.enum[0]
  if (s.const !== undefined) return s.const
  switch (s.type) {
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 1, 1)
    case 'boolean':
      return true
    case 'array': {
      const count = s.minItems ?? 0
      return Array.from({ length: count }, () => plausible(s.items ?? {}, name, known))
    }
    case 'object': {
      const value: Record<string, unknown> = {}
      for (const key of s.required ?? []) value[key] = plausible(s.properties?.[key] ?? {}, key, known)
      return value
    }
    case 'string':
      switch (s.format) {
        case 'date':
          return '2026-01-01'
        case 'date-time':
          return '2026-01-01T00:00:00Z'
        case 'ipv4':
          return '192.0.2.1'
        case 'ipv6':
          return '2001:db8::1'
        case 'uuid':
          return '00000000-0000-4000-8000-000000000000'
        case 'uri':
          return 'https://example.com/'
      }
      return 'x'.repeat(Math.max(s.minLength ?? 1, 1))
  }
  return 'x'
}
