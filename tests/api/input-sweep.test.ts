import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  alternatives,
  type JsonSchema,
  jsonCases,
  plausible,
  textCases,
  type ValueCase,
} from '../support/schema-cases.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Every operation of the OpenAPI document, each parameter and JSON body field fed values built from
// its own schema (too large, negative, fractional, beyond 2^63, NaN, control characters, 10 KB text,
// prototype keys, wrong types, wrong content types). A value the schema or an input rule refuses
// (docs/api.md, "Input rules") must be a 400 naming the field; any value must be answered without a
// 5xx, a stack, a path or an HTML page. The cases come from /openapi/json alone, so a new route is
// swept without editing this file.

interface Parameter {
  name: string
  in: 'query' | 'path' | 'header' | 'cookie'
  required?: boolean
  schema: JsonSchema
}
interface Operation {
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> }
}
interface Sent {
  method: string
  path: string
  query: [string, string][]
  body?: string
  contentType?: string
}
interface Check {
  name: string
  request: Sent
  /** The field a 400 must name; null for a probe (any non-5xx answer will do). */
  field: string | null
}

let t: TestApp
let owner: TestAccount
let base: string
let server: { stop(): Promise<void> | void }
let doc: {
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, JsonSchema> }
}
const known: Record<string, unknown> = {}

beforeAll(async () => {
  t = await startTestApp({
    RATE_LIMIT_API_PER_MINUTE: '10000000',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
    RATE_LIMIT_DNS_WRITES_PER_MINUTE: '10000000',
    RATE_LIMIT_WEBHOOKS_PER_HOUR: '10000000',
    // Nothing answers there: a lookup fails at once instead of going out.
    DNS_SERVERS: '127.0.0.1:9',
    DNS_TIMEOUT_MS: '200',
  })
  owner = await t.account()
  const domain = await t.request('POST', '/api/v1/domains', {
    token: owner.token,
    body: { domain_name: 'sweep.example' },
  })
  const organization = await t.request('POST', '/api/v1/organizations', {
    token: owner.token,
    body: { name: 'Sweep' },
  })
  const embed = await t.request('POST', '/api/v1/embed-keys', {
    token: owner.token,
    body: { name: 'Sweep', allowed_origins: ['https://sweep.example'] },
  })
  expect([domain.status, organization.status, embed.status]).toEqual([201, 201, 201])
  Object.assign(known, {
    name: 'sweep.example',
    domain: 'sweep.example',
    domain_name: 'sweep.example',
    group: organization.body.data.id,
    organization_id: organization.body.data.id,
    embed_key: embed.body.data.key,
    source: '192.0.2.1',
  })
  doc = (await t.request('GET', '/openapi/json')).body
  doc.paths = inlineRefs(doc.paths, 0) as typeof doc.paths
  // A real server, so that anything escaping the app meets Bun's own error handling too.
  const listening = t.app.listen({ port: 0, hostname: '127.0.0.1' })
  server = { stop: () => listening.server?.stop(true) }
  base = `http://127.0.0.1:${listening.server!.port}`
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await t?.close()
})

/** The paths with every `$ref` replaced by its component, so nested schemas read directly. */
function inlineRefs(node: unknown, depth: number): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, depth))
  if (node === null || typeof node !== 'object') return node
  const ref = (node as { $ref?: unknown }).$ref
  if (typeof ref === 'string' && depth < 8) {
    const target = doc.components?.schemas?.[ref.split('/').pop()!]
    if (target) return inlineRefs(target, depth + 1)
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineRefs(value, depth)]))
}

const resolve = (schema: JsonSchema): JsonSchema =>
  schema.$ref ? resolve(doc.components?.schemas?.[schema.$ref.split('/').pop()!] ?? {}) : schema

function operations(): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  )
}

const jsonSchemaOf = (op: Operation) => {
  const content = op.requestBody?.content ?? {}
  const type = Object.keys(content).find((c) => /json/.test(c))
  return type === undefined ? null : resolve(content[type]!.schema)
}

/** Body fields to fuzz: every property down to two levels, list items by index 0 (`a.0.b`). */
function bodyFields(schema: JsonSchema, prefix = '', depth = 0): { path: string[]; schema: JsonSchema }[] {
  const object = alternatives(resolve(schema)).find((s) => s.type === 'object')
  if (!object || depth > 2) return []
  return Object.entries(object.properties ?? {}).flatMap(([key, raw]) => {
    const field = resolve(raw)
    const path = prefix === '' ? [key] : [...prefix.split('.'), key]
    const nested: { path: string[]; schema: JsonSchema }[] = []
    const list = alternatives(field).find((s) => s.type === 'array')
    if (list?.items) nested.push({ path: [...path, '0'], schema: resolve(list.items) })
    if (list?.items) nested.push(...bodyFields(list.items, [...path, '0'].join('.'), depth + 1))
    nested.push(...bodyFields(field, path.join('.'), depth + 1))
    return [{ path, schema: field }, ...nested]
  })
}

/** Puts `value` at `path` (`['sources', '0', 'kind']`), making the lists and objects on the way. */
function setIn(target: Record<string, unknown>, path: string[], value: unknown) {
  let node: any = target
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!
    if (node[key] === undefined || node[key] === null || typeof node[key] !== 'object') {
      node[key] = /^\d+$/.test(path[i + 1]!) ? [] : {}
    }
    node = node[key]
  }
  node[path.at(-1)!] = value
}

const RAW = '\u2063raw\u2063'

function buildChecks(): Check[] {
  const checks: Check[] = []
  for (const { method, path: template, op } of operations()) {
    const params = (op.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query')
    const pathValues = Object.fromEntries(
      params
        .filter((p) => p.in === 'path')
        .map((p) => [p.name, String(plausible(resolve(p.schema), p.name, known))]),
    )
    const requiredQuery = params
      .filter((p) => p.in === 'query' && p.required)
      .map((p) => [p.name, String(plausible(resolve(p.schema), p.name, known))] as [string, string])
    const bodySchema = jsonSchemaOf(op)
    const baseBody = bodySchema ? (plausible(bodySchema, '', known) as Record<string, unknown>) : undefined
    const request = (over: Partial<Sent> & { pathValues?: Record<string, string> }): Sent => {
      const values = { ...pathValues, ...over.pathValues }
      const path = template.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(values[name]!))
      return {
        method,
        path,
        query: over.query ?? requiredQuery,
        body: over.body ?? (baseBody === undefined ? undefined : JSON.stringify(baseBody)),
        contentType: over.contentType ?? (baseBody === undefined ? undefined : 'application/json'),
      }
    }
    const name = (what: string, c: ValueCase) => `${method} ${template} ${what}: ${c.label}`
    for (const p of params) {
      for (const c of textCases(resolve(p.schema))) {
        const value = c.value as string
        const sent =
          p.in === 'path'
            ? request({ pathValues: { [p.name]: value } })
            : request({ query: [...requiredQuery.filter(([k]) => k !== p.name), [p.name, value]] })
        checks.push({ name: name(`${p.in} ${p.name}`, c), request: sent, field: c.violation ? p.name : null })
      }
      if (p.in === 'query') {
        const once = String(plausible(resolve(p.schema), p.name, known))
        checks.push({
          name: `${method} ${template} query ${p.name}: given twice`,
          request: request({
            query: [...requiredQuery.filter(([k]) => k !== p.name), [p.name, once], [p.name, once]],
          }),
          field: p.name,
        })
      }
    }
    const bounded = params.find(
      (p) => p.in === 'query' && alternatives(resolve(p.schema)).some((a) => a.maximum !== undefined),
    )
    for (const key of ['__proto__', 'constructor', 'toString']) {
      checks.push({
        name: `${method} ${template} query key ${key}`,
        request: request({ query: [...requiredQuery, [key, '1']] }),
        field: key,
      })
      if (bounded === undefined) continue
      // The same out-of-range value under a prototype key first: naming the failing field by its
      // value must not trip over the key (this made the error mapping throw; issue #16).
      const max = alternatives(resolve(bounded.schema)).find((a) => a.maximum !== undefined)!.maximum!
      const over = String(max + 1)
      checks.push({
        name: `${method} ${template} query key ${key} beside ${bounded.name} out of range`,
        request: request({
          query: [...requiredQuery.filter(([k]) => k !== bounded.name), [key, over], [bounded.name, over]],
        }),
        field: '*',
      })
    }
    if (bodySchema === null || baseBody === undefined) continue
    for (const { path, schema } of bodyFields(bodySchema)) {
      for (const c of jsonCases(schema)) {
        const body = structuredClone(baseBody)
        // Raw JSON text (a number literal JavaScript cannot hold) goes in where a placeholder was.
        setIn(body, path, c.raw ? RAW : c.value)
        let text = JSON.stringify(body)
        if (c.raw) text = text.replace(JSON.stringify(RAW), c.value as string)
        checks.push({
          name: name(`body ${path.join('.')}`, c),
          request: request({ body: text }),
          field: c.violation ? path.join('.') : null,
        })
      }
    }
    const objectBody = JSON.stringify(baseBody).slice(1, -1)
    for (const key of ['__proto__', 'constructor', 'toString']) {
      const text = `{"${key}": {"polluted": true}${objectBody === '' ? '' : `, ${objectBody}`}}`
      checks.push({
        name: `${method} ${template} body key ${key}`,
        request: request({ body: text }),
        field: key,
      })
    }
    const wrong: [string, string, string | undefined][] = [
      ['text/plain', JSON.stringify(baseBody), 'body'],
      ['application/x-www-form-urlencoded', 'a=b', 'body'],
      [
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n',
        'body',
      ],
      ['application/json', '[]', undefined],
      ['application/json', '"x"', undefined],
      ['application/json', '{"a": NaN}', 'body'],
      ['application/json', `{"a": ${'['.repeat(64)}${']'.repeat(64)}}`, 'body'],
    ]
    for (const [contentType, body, field] of wrong) {
      checks.push({
        name: `${method} ${template} ${contentType} ${body.slice(0, 20)}`,
        request: request({ body, contentType }),
        field: field ?? '*',
      })
    }
  }
  return checks
}

const LEAKS = [
  /\bat \S+ \(/, // a stack frame
  /\.tsx?:\d+/,
  /node_modules/,
  /<!doctype|<html/i,
  /"stack"/,
  new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
]

async function send(sent: Sent): Promise<{ status: number; type: string; text: string }> {
  const url = new URL(sent.path, base)
  for (const [key, value] of sent.query) url.searchParams.append(key, value)
  const headers: Record<string, string> = { authorization: `Bearer ${owner.token}` }
  if (sent.contentType) headers['content-type'] = sent.contentType
  const response = await fetch(url, {
    method: sent.method,
    headers,
    body: sent.body,
    signal: AbortSignal.timeout(15_000),
  })
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
  }
}

function judge(check: Check, answer: { status: number; type: string; text: string }): string | null {
  const leak = LEAKS.find((pattern) => pattern.test(answer.text))
  if (leak) return `leaks ${leak}: ${answer.text.slice(0, 200)}`
  if (answer.status >= 500) return `status ${answer.status}: ${answer.text.slice(0, 200)}`
  if (check.field === null) {
    if (answer.status >= 400 && !answer.type.includes('application/json'))
      return `content type ${answer.type}`
    return null
  }
  if (answer.status !== 400) return `status ${answer.status}, wanted 400: ${answer.text.slice(0, 200)}`
  if (!answer.type.includes('application/json')) return `content type ${answer.type}`
  let body: any
  try {
    body = JSON.parse(answer.text)
  } catch {
    return `not JSON: ${answer.text.slice(0, 200)}`
  }
  if (typeof body?.message !== 'string' || body.errors === null || typeof body.errors !== 'object')
    return `not the validation shape: ${answer.text.slice(0, 200)}`
  const fields = Object.keys(body.errors)
  if (
    fields.length === 0 ||
    !Object.values(body.errors).every((m) => Array.isArray(m) && m.every((s) => typeof s === 'string'))
  )
    return `empty or malformed errors: ${answer.text.slice(0, 200)}`
  // A field, or one inside it (a list item given as an object lacking its required fields).
  const named = fields.some((f) => f === check.field || f.startsWith(`${check.field}.`))
  if (check.field !== '*' && !named) return `errors name ${fields.join(', ')}, not ${check.field}`
  return null
}

/** Every integer and string a request may carry, with where it is. */
function requestScalars(): { where: string; schema: JsonSchema }[] {
  const found: { where: string; schema: JsonSchema }[] = []
  const walk = (schema: JsonSchema, where: string, depth: number) => {
    for (const alt of alternatives(resolve(schema))) {
      if (alt.type === 'object' && depth < 6) {
        for (const [key, inner] of Object.entries(alt.properties ?? {}))
          walk(inner, `${where}.${key}`, depth + 1)
        for (const inner of Object.values(alt.patternProperties ?? {})) walk(inner, `${where}.*`, depth + 1)
      } else if (alt.type === 'array' && alt.items && depth < 6) walk(alt.items, `${where}.0`, depth + 1)
      else if (alt.type === 'integer' || alt.type === 'number' || alt.type === 'string')
        found.push({ where, schema: alt })
    }
  }
  for (const { method, path, op } of operations()) {
    for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.in} ${p.name}`, 0)
    const body = jsonSchemaOf(op)
    if (body) walk(body, `${method} ${path} body`, 0)
  }
  return found
}

describe('request schemas of the OpenAPI document', () => {
  test('bound every integer (minimum and maximum) and every string (length, values or format)', () => {
    const unbounded = requestScalars()
      .filter(({ schema: s }) => {
        if (s.type === 'string') {
          // Elysia's numeric-text alternative of a coerced integer is judged with that integer.
          if (s.format === 'integer' || s.format === 'number') return false
          return (
            s.maxLength === undefined &&
            s.enum === undefined &&
            s.const === undefined &&
            s.format === undefined
          )
        }
        return s.minimum === undefined || s.maximum === undefined
      })
      .map(({ where, schema }) => `${where}: ${JSON.stringify(schema)}`)
    expect(unbounded).toEqual([])
  })
})

describe('every operation of the OpenAPI document', () => {
  test('answers every generated bad value with a 4xx in the contract shape, never a 5xx or a leak', async () => {
    const checks = buildChecks()
    expect(checks.length).toBeGreaterThan(1000)
    const failures: string[] = []
    let next = 0
    const worker = async () => {
      while (next < checks.length) {
        const check = checks[next++]!
        const problem = judge(check, await send(check.request))
        if (problem) failures.push(`${check.name} → ${problem}`)
      }
    }
    await Promise.all(Array.from({ length: 6 }, worker))
    expect(failures).toEqual([])
  }, 120_000)
})
