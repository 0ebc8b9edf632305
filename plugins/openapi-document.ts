// The document @elysiajs/openapi emits, brought to what OpenAPI 3.1 (JSON Schema 2020-12) says, so
// a standard linter passes it and generated clients type it right (docs/api.md, "OpenAPI document").
// Every schema of every route goes through here, so a new route is right without doing anything.
//
// - `nullable` is OpenAPI 3.0 only; Elysia's `t.Nullable` still writes it beside the union with
//   null. Null is a type in 3.1: `type: [X, 'null']`, or `anyOf` with `{type: 'null'}`; an enum
//   that admits null lists it.
// - `t.Integer` is a transform that also accepts integer text, and shows as
//   `anyOf [{type: string, format: integer}, {type: integer}]`: the contract is an integer, so
//   that is what the document says (query values are text on the wire in any case).
// - A response without a body (204) is emitted with `content: {type: 'void'}`, which is no
//   media-type map: such a response has no `content`.
// - `$id: '#/components/schemas/X'` (a fragment, which 2020-12 forbids in `$id`) is dropped.
// - A record (`patternProperties` '^(.*)$') is written `additionalProperties`.
// - A recursive TypeBox type (`$id: 'X'` with `$ref: 'X'` inside) becomes the component X.
// - A schema written out again where a named model was meant (Elysia inlines models used inside
//   other models) becomes a `$ref` to that model, so clients get one named type for it.

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

const MAP_KEYS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const
const LIST_KEYS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const
const VALUE_KEYS = ['items', 'additionalProperties', 'unevaluatedProperties', 'contains', 'not'] as const

/** Applies `fn` to each direct subschema of `schema` (a copy is returned). */
function mapSubschemas(schema: Json, fn: (child: Json) => Json): Json {
  const out: Json = { ...schema }
  for (const key of MAP_KEYS) {
    const map = out[key]
    if (isObject(map))
      out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, isObject(v) ? fn(v) : v]))
  }
  for (const key of LIST_KEYS) {
    const list = out[key]
    if (Array.isArray(list)) out[key] = list.map((v) => (isObject(v) ? fn(v) : v))
  }
  for (const key of VALUE_KEYS) {
    const value = out[key]
    if (isObject(value)) out[key] = fn(value)
  }
  return out
}

const isNullSchema = (s: unknown) => isObject(s) && s.type === 'null' && Object.keys(s).length === 1

function admitsNull(schema: Json): boolean {
  const type = schema.type
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  const union = (schema.anyOf ?? schema.oneOf) as unknown
  return Array.isArray(union) && union.some((s) => isObject(s) && admitsNull(s))
}

/** `{type: string, format: integer}`: the text alternative of Elysia's `t.Integer`. */
const isIntegerText = (s: unknown) =>
  isObject(s) &&
  s.type === 'string' &&
  s.format === 'integer' &&
  Object.keys(s).every((k) => k === 'type' || k === 'format' || k === 'default')

/** Adds null to a schema's type (and to its enum, which would otherwise refuse it). */
function withNull(schema: Json): Json {
  if (admitsNull(schema)) return schema
  const out: Json = { ...schema }
  if (typeof out.type === 'string') out.type = [out.type, 'null']
  else if (Array.isArray(out.type)) out.type = [...out.type, 'null']
  else return { anyOf: [schema, { type: 'null' }] }
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  return out
}

export function conformSchema(input: Json): Json {
  let schema = mapSubschemas(input, conformSchema)
  const nullable = schema.nullable === true
  if ('nullable' in schema) {
    const { nullable: _, ...rest } = schema
    schema = rest
  }
  // TypeBox names models with `$id: '#/components/schemas/X'`; JSON Schema 2020-12 §8.2.1 forbids a
  // fragment there, and the name is the component's key already.
  if (typeof schema.$id === 'string' && schema.$id.startsWith('#')) {
    const { $id: _, ...rest } = schema
    schema = rest
  }
  // TypeBox writes a record as `patternProperties: {'^(.*)$': X}`: every name, which JSON Schema
  // says as `additionalProperties: X` (and clients read better).
  const patterns = schema.patternProperties
  if (isObject(patterns) && Object.keys(patterns).length === 1 && isObject(patterns['^(.*)$'])) {
    const { patternProperties: _, ...rest } = schema
    schema = { ...rest, additionalProperties: patterns['^(.*)$'] }
  }
  const union = schema.anyOf
  if (Array.isArray(union)) {
    // t.Integer: keep the integer alternative, with what the outer schema says of it.
    if (union.length === 2 && isIntegerText(union[0]) && isObject(union[1]) && union[1].type === 'integer') {
      const { anyOf: _, ...outer } = schema
      schema = { ...outer, ...union[1] }
    } else if (union.length === 2 && union.some(isNullSchema)) {
      // X or null, with X one plain type: `type: [X, 'null']`.
      const other = union.find((s) => !isNullSchema(s))
      if (isObject(other) && typeof other.type === 'string' && !('$ref' in other)) {
        const { anyOf: _, ...outer } = schema
        schema = withNull({ ...outer, ...other })
      }
    }
  }
  if (Array.isArray(schema.type) && schema.type.includes('null') && Array.isArray(schema.enum)) {
    if (!schema.enum.includes(null)) schema = { ...schema, enum: [...schema.enum, null] }
  }
  return nullable ? withNull(schema) : schema
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (isObject(value)) {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** Replaces inline copies of named object models with references to them. */
function modelReferencer(components: Record<string, Json>) {
  const byShape = new Map<string, string>()
  for (const [name, model] of Object.entries(components)) {
    const shape = canonical(model)
    if (model.type === 'object' && isObject(model.properties) && !byShape.has(shape)) byShape.set(shape, name)
  }
  return (schema: Json, self: string | null): Json => {
    const visit = (node: Json, root: boolean): Json => {
      if (!root || self === null) {
        const name = byShape.get(canonical(node))
        if (name !== undefined && name !== self) return { $ref: `#/components/schemas/${name}` }
      }
      return mapSubschemas(node, (child) => visit(child, false))
    }
    return visit(schema, true)
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

function conformContent(content: unknown, fix: (s: Json) => Json): unknown {
  if (!isObject(content)) return content
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      isObject(media) && isObject(media.schema) ? { ...media, schema: fix(media.schema) } : media,
    ]),
  )
}

function conformOperation(operation: Json, fix: (s: Json) => Json): Json {
  const out: Json = { ...operation }
  if (Array.isArray(out.parameters))
    out.parameters = out.parameters.map((p) =>
      isObject(p) && isObject(p.schema) ? { ...p, schema: fix(p.schema) } : p,
    )
  if (isObject(out.requestBody))
    out.requestBody = { ...out.requestBody, content: conformContent(out.requestBody.content, fix) }
  if (isObject(out.responses)) {
    out.responses = Object.fromEntries(
      Object.entries(out.responses).map(([status, response]) => {
        if (!isObject(response)) return [status, response]
        const { content, ...rest } = response
        // A body-less response: Elysia writes `{type: 'void', description}` where a media-type map goes.
        if (content === undefined || (isObject(content) && typeof content.type === 'string'))
          return [status, rest]
        return [status, { ...rest, content: conformContent(content, fix) }]
      }),
    )
  }
  return out
}

function mapPaths(paths: Json, fix: (s: Json) => Json): Json {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => {
      if (!isObject(item)) return [path, item]
      const out: Json = { ...item }
      for (const method of METHODS) {
        const operation = out[method]
        if (isObject(operation)) out[method] = conformOperation(operation, fix)
      }
      return [path, out]
    }),
  )
}

/**
 * TypeBox's recursive types (`Type.Recursive(..., {$id: 'X'})`) are written inline wherever they are
 * used, with `$id: 'X'` and `$ref: 'X'` inside: a reference OpenAPI cannot resolve. Each becomes
 * the component X, referenced as `#/components/schemas/X`.
 */
function namedSchemaHoister(named: Map<string, Json>) {
  const hoist = (node: Json): Json => {
    if (typeof node.$id === 'string' && !node.$id.startsWith('#')) {
      const { $id: id, ...rest } = node
      if (!named.has(id)) {
        named.set(id, {})
        named.set(id, mapSubschemas(rest, hoist))
      }
      return { $ref: `#/components/schemas/${id}` }
    }
    if (typeof node.$ref === 'string' && !node.$ref.startsWith('#'))
      return { ...node, $ref: `#/components/schemas/${node.$ref}` }
    return mapSubschemas(node, hoist)
  }
  return hoist
}

/** The emitted document, valid OpenAPI 3.1 (see the notes at the top of this file). */
export function conformOpenApiDocument(document: Json): Json {
  const components = isObject(document.components) ? document.components : {}
  const named = new Map<string, Json>()
  const hoist = namedSchemaHoister(named)
  const emitted = isObject(components.schemas) ? (components.schemas as Record<string, Json>) : {}
  const hoistedSchemas = Object.fromEntries(Object.entries(emitted).map(([name, s]) => [name, hoist(s)]))
  const hoistedPaths = mapPaths(isObject(document.paths) ? document.paths : {}, hoist)
  for (const [name, schema] of named) if (!(name in hoistedSchemas)) hoistedSchemas[name] = schema

  const conformed = Object.fromEntries(
    Object.entries(hoistedSchemas).map(([name, schema]) => [name, conformSchema(schema)]),
  )
  const reference = modelReferencer(conformed)
  const schemas = Object.fromEntries(
    Object.entries(conformed).map(([name, schema]) => [name, reference(schema, name)]),
  )
  return {
    ...document,
    paths: mapPaths(hoistedPaths, (schema) => reference(conformSchema(schema), null)),
    components: { ...components, schemas },
  }
}
