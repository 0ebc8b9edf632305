import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'

// Walks every schema of the served OpenAPI document: every response is typed (no free-form
// object, no schema that says nothing), and every property of a request or response body is
// snake_case (docs/api.md, "OpenAPI document").

type Schema = Record<string, unknown>

let t: TestApp
let spec: { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } }

beforeAll(async () => {
  t = await startTestApp()
  spec = (await t.request('GET', '/openapi/json')).body
}, 60_000)
afterAll(() => t.close())

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/
const TYPED = ['type', 'anyOf', 'oneOf', 'allOf', '$ref', 'const', 'enum', 'not'] as const

interface Found {
  untyped: string[]
  freeForm: string[]
  notSnakeCase: string[]
}

/** Visits a schema and everything it references; `response` turns on the typing checks. */
function walk(root: unknown, where: string, response: boolean, found: Found) {
  const seen = new Set<string>()
  const visit = (schema: unknown, at: string) => {
    if (!isObject(schema)) return
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.replace('#/components/schemas/', '')
      if (seen.has(name)) return
      seen.add(name)
      expect(spec.components.schemas[name], `${at}: ${schema.$ref}`).toBeDefined()
      visit(spec.components.schemas[name], `#${name}`)
      return
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (response && !TYPED.some((k) => k in schema)) found.untyped.push(at)
    const typedMap = (v: unknown) => isObject(v) && Object.keys(v).length > 0
    if (
      response &&
      types.includes('object') &&
      !typedMap(schema.properties) &&
      !isObject(schema.additionalProperties) &&
      !typedMap(schema.patternProperties)
    )
      found.freeForm.push(at)
    if (isObject(schema.properties)) {
      for (const [name, child] of Object.entries(schema.properties)) {
        if (!SNAKE_CASE.test(name)) found.notSnakeCase.push(`${at}.${name}`)
        visit(child, `${at}.${name}`)
      }
    }
    if (isObject(schema.patternProperties))
      for (const [pattern, child] of Object.entries(schema.patternProperties))
        visit(child, `${at}{${pattern}}`)
    visit(schema.additionalProperties, `${at}{*}`)
    visit(schema.items, `${at}[]`)
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
      const list = schema[key]
      if (Array.isArray(list)) for (const [i, child] of list.entries()) visit(child, `${at}|${i}`)
    }
  }
  visit(root, where)
}

function jsonSchemas(content: unknown): unknown[] {
  if (!isObject(content)) return []
  return Object.entries(content)
    .filter(([type]) => type.includes('json'))
    .map(([, media]) => (isObject(media) ? media.schema : undefined))
}

function walkDocument(): Found {
  const found: Found = { untyped: [], freeForm: [], notSnakeCase: [] }
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const name = `${method.toUpperCase()} ${path}`
      const responses = isObject(operation.responses) ? operation.responses : {}
      for (const [status, response] of Object.entries(responses)) {
        for (const schema of jsonSchemas(isObject(response) ? response.content : undefined))
          walk(schema, `${name} ${status}`, true, found)
      }
      const body = isObject(operation.requestBody) ? operation.requestBody.content : undefined
      for (const schema of jsonSchemas(body)) walk(schema, `${name} body`, false, found)
    }
  }
  return found
}

test('every response schema is typed and every property is snake_case', () => {
  expect(Object.keys(spec.paths).length).toBeGreaterThan(50)
  expect(walkDocument()).toEqual({ untyped: [], freeForm: [], notSnakeCase: [] })
})

test('the walk finds a free-form object, an untyped schema and a camelCase property', () => {
  // The same walk over a document holding what it must refuse, so a pass above means something.
  const saved = spec
  spec = {
    paths: {
      '/x': {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      policy: { type: 'object', description: 'as reported' },
                      records: { type: 'array', items: { description: 'anything' } },
                      humanResult: { type: 'string' },
                      map: { type: 'object', additionalProperties: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
          requestBody: {
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Body' } } },
          },
        },
      },
    },
    components: {
      schemas: { Body: { type: 'object', properties: { discoveryMethod: { type: 'string' } } } },
    },
  }
  try {
    expect(walkDocument()).toEqual({
      untyped: ['GET /x 200.records[]'],
      freeForm: ['GET /x 200.policy'],
      notSnakeCase: ['GET /x 200.humanResult', '#Body.discoveryMethod'],
    })
  } finally {
    spec = saved
  }
})
